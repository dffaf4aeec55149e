"""3x3 / stride-1 / pad-1 average pooling (zero padding counted): the pool branch of Inception-v3 blocks."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "avg_pool2d_3x3s1"
CATEGORY = "pooling"
DESCRIPTION = """
2-D average pooling, kernel 3x3, stride 1, padding 1, count_include_pad=True
(F.avg_pool2d(x, 3, 1, 1)) on a contiguous NCHW map x[B, C, H, W]; output [B, C, H, W]:
    y[b, c, i, j] = (1 / 9) * sum over dh, dw in {-1, 0, 1} of x[b, c, i + dh, j + dw]
where taps outside the map contribute 0 and the divisor is always 9 (border outputs too).
Sum in fp32 and round once to x's dtype. "outlier" mode scales rare values by up to 1000x.
"""
ENTRY_POINT = "avg_pool2d_3x3s1"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "inception_v3_mixed5_b256", "dims": {"B": 256, "C": 192, "H": 35, "W": 35}, "weight": 0.4,
     "phase": "prefill", "source": "Inception-v3 Mixed_5b pool branch (192 ch, 35x35), batch 256"},
    {"name": "inception_v3_mixed6_b256", "dims": {"B": 256, "C": 768, "H": 17, "W": 17}, "weight": 0.3,
     "phase": "prefill", "source": "Inception-v3 Mixed_6b-e pool branch (768 ch, 17x17), batch 256"},
    {"name": "inception_v3_mixed7_b1", "dims": {"B": 1, "C": 1280, "H": 8, "W": 8}, "weight": 0.3,
     "phase": "decode", "source": "Inception-v3 Mixed_7b pool branch (1280 ch, 8x8), batch-1 inference"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "C": 3, "H": 16, "W": 16}},
    {"name": "tail", "dims": {"B": 1, "C": 5, "H": 13, "W": 11}},
]
# fp32: nine-term sums in a different order and * (1/9) instead of / 9 move an ulp or two.
# fp16/bf16: one rounding of the fp32 average on each side.
TOLERANCE = {
    "fp32": {"atol": 1e-6, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.avg_pool2d", "torch.avg_pool2d", "torch.nn.AvgPool2d",
             "torch.nn.functional.adaptive_avg_pool2d", "torch.nn.functional.conv2d", "torch.conv2d",
             "torch.nn.functional.unfold", "torch.Tensor.unfold", "torch.nn.functional.lp_pool2d")


def avg_pool2d_3x3s1(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.avg_pool2d(x.float(), kernel_size=3, stride=1, padding=1).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["B"], dims["C"], dims["H"], dims["W"]), dtype, gen)
    return (maybe_outliers(x, mode, gen),)


def _numel(dims):
    return dims["B"] * dims["C"] * dims["H"] * dims["W"]


def flops(dims, dtype):
    # 8 adds and a multiply per output
    return 9.0 * _numel(dims)


def min_bytes(dims, dtype):
    return 2.0 * _numel(dims) * elem_size(dtype)
