"""Hard-swish, the activation of MobileNetV3's blocks, on NCHW feature maps."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "hardswish"
CATEGORY = "activation"
DESCRIPTION = """
Elementwise hard-swish (nn.Hardswish) on a contiguous 4-D feature map x[B, C, H, W]:
    y = x * min(max(x + 3, 0), 6) / 6
i.e. 0 for x <= -3, x for x >= 3, x * (x + 3) / 6 in between. Output has x's shape and dtype;
compute in fp32 and round once. "outlier" mode scales rare values by 10-1000x (they land on the
linear or zero branches).
"""
ENTRY_POINT = "hardswish"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "mobilenetv3_l_stem_b256", "dims": {"B": 256, "C": 16, "H": 112, "W": 112}, "weight": 0.4,
     "phase": "train", "source": "MobileNetV3-Large stem conv output (16 ch, 112x112), batch 256 training"},
    {"name": "mobilenetv3_l_last_b256", "dims": {"B": 256, "C": 960, "H": 7, "W": 7}, "weight": 0.3,
     "phase": "prefill", "source": "MobileNetV3-Large final 1x1 conv output (960 ch, 7x7), batch 256"},
    {"name": "mobilenetv3_l_expand_b1_tail", "dims": {"B": 1, "C": 240, "H": 14, "W": 14}, "weight": 0.3,
     "phase": "decode", "source": "MobileNetV3-Large stage-4 expansion (240 ch, 14x14), batch-1 inference (tail)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "C": 4, "H": 8, "W": 8}},
    {"name": "tail", "dims": {"B": 1, "C": 5, "H": 13, "W": 11}},
]
# fp32 math on both sides (a multiply by 1/6 instead of a divide moves an ulp); one rounding to
# the output dtype, so at most one ulp apart there.
TOLERANCE = {
    "fp32": {"atol": 1e-6, "rtol": 1e-6},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.hardswish", "torch.nn.Hardswish", "torch.nn.functional.hardsigmoid",
             "torch.nn.functional.relu6", "torch.nn.functional.hardtanh", "torch.clamp", "torch.clip")


def hardswish(x: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    return (xf * torch.clamp(xf + 3.0, 0.0, 6.0) / 6.0).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["B"], dims["C"], dims["H"], dims["W"]), dtype, gen, std=3.0)
    return (maybe_outliers(x, mode, gen),)


def _numel(dims):
    return dims["B"] * dims["C"] * dims["H"] * dims["W"]


def flops(dims, dtype):
    # add, max, min, multiply, divide
    return 5.0 * _numel(dims)


def min_bytes(dims, dtype):
    return 2.0 * _numel(dims) * elem_size(dtype)
