"""Mish, x * tanh(softplus(x)): the activation of YOLOv4's CSPDarknet53 backbone."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "mish"
CATEGORY = "activation"
DESCRIPTION = """
Elementwise Mish (nn.Mish) on a contiguous 4-D feature map x[B, C, H, W]:
    y = x * tanh(softplus(x)),   softplus(x) = log(1 + exp(x))
Output has x's shape and dtype; compute in fp32 and round once. Inputs in "outlier" mode reach
magnitudes of a few thousand: exp(x) overflows fp32 there, and the result must still be finite
(y -> x for large positive x, y -> -0 for large negative x). For very negative x the result is
tiny (about x * exp(x)); absolute error there is judged by atol.
"""
ENTRY_POINT = "mish"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "yolov4_csp_stage1_b8", "dims": {"B": 8, "C": 64, "H": 304, "W": 304}, "weight": 0.4,
     "phase": "prefill", "source": "YOLOv4 CSPDarknet53 at 608 px, first downsampled stage (64 ch, 304x304), batch 8"},
    {"name": "yolov4_csp_stage5_b8", "dims": {"B": 8, "C": 1024, "H": 19, "W": 19}, "weight": 0.3,
     "phase": "prefill", "source": "YOLOv4 CSPDarknet53 at 608 px, last stage (1024 ch, 19x19, odd), batch 8"},
    {"name": "yolov4_csp_stage3_b1", "dims": {"B": 1, "C": 256, "H": 76, "W": 76}, "weight": 0.3,
     "phase": "decode", "source": "YOLOv4 CSPDarknet53 at 608 px, stage 3 (256 ch, 76x76), batch-1 inference"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "C": 4, "H": 8, "W": 8}},
    {"name": "tail", "dims": {"B": 1, "C": 5, "H": 13, "W": 11}},
]
# fp32 formulations differ (tanh of softplus, or the rational form in exp(x)) by a few fp32 ulps;
# each side rounds once to the output dtype, so at most one ulp apart there.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.mish", "torch.nn.Mish", "torch.nn.functional.softplus", "torch.nn.Softplus",
             "torch.tanh", "torch.nn.functional.tanh", "torch.logaddexp")


def mish(x: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    softplus = torch.clamp_min(xf, 0.0) + torch.log1p(torch.exp(-xf.abs()))
    return (xf * torch.tanh(softplus)).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["B"], dims["C"], dims["H"], dims["W"]), dtype, gen, std=3.0)
    return (maybe_outliers(x, mode, gen),)


def _numel(dims):
    return dims["B"] * dims["C"] * dims["H"] * dims["W"]


def flops(dims, dtype):
    # softplus (abs, exp, log1p, max, add), tanh, multiply: about 8 per element
    return 8.0 * _numel(dims)


def min_bytes(dims, dtype):
    return 2.0 * _numel(dims) * elem_size(dtype)
