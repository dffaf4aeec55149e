"""Reflection padding of NCHW maps: CycleGAN / pix2pixHD ResNet generators, LaMa, super-resolution nets."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "pad_reflect2d"
CATEGORY = "spatial"
DESCRIPTION = """
F.pad(x, (p, p, p, p), mode="reflect") (nn.ReflectionPad2d(p)) on a contiguous NCHW map
x[B, C, H, W] with 0 < p < min(H, W); output [B, C, H + 2p, W + 2p]:
    y[b, c, i, j] = x[b, c, r(i - p, H), r(j - p, W)],   r(k, n) = |k| for k < 0, 2(n - 1) - k for k >= n
i.e. the border is mirrored WITHOUT repeating the edge row/column (reflect, not symmetric or
replicate). p is a Python int. Bit-exact in x's dtype. "outlier" mode scales rare values by up
to 1000x.
"""
ENTRY_POINT = "pad_reflect2d"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "cyclegan_resblock_b16", "dims": {"B": 16, "C": 256, "H": 64, "W": 64, "P": 1}, "weight": 0.4,
     "phase": "prefill", "source": "CycleGAN ResNet-9 generator residual block ReflectionPad2d(1) (256 ch, 64x64), "
                                   "batch 16"},
    {"name": "pix2pixhd_resblock_1024x2048", "dims": {"B": 1, "C": 1024, "H": 64, "W": 128, "P": 1}, "weight": 0.3,
     "phase": "prefill", "source": "pix2pixHD global generator residual block (1024 ch at 64x128 for 1024x2048 "
                                   "maps), batch 1"},
    {"name": "cyclegan_input_pad3_b16_tail", "dims": {"B": 16, "C": 3, "H": 256, "W": 256, "P": 3}, "weight": 0.3,
     "phase": "prefill", "source": "CycleGAN generator input ReflectionPad2d(3) (3 ch, 256 -> 262), batch 16 (tail)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "C": 3, "H": 8, "W": 8, "P": 1}},
    {"name": "tail", "dims": {"B": 1, "C": 5, "H": 7, "W": 11, "P": 3}},
]
# A permuted copy: exact.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 0.0},
    "fp16": {"atol": 0.0, "rtol": 0.0},
    "bf16": {"atol": 0.0, "rtol": 0.0},
}
# the whole job is moving data: PyTorch copies would do it (benchmarks/harness/calls.py, COPIED_SHARE)
MOVES_DATA = True
FORBIDDEN = ("torch.nn.functional.pad", "torch.nn.ReflectionPad2d", "torch.reflection_pad2d", "torch.flip",
             "torch.Tensor.flip", "torch.cat", "torch.concat", "torch.stack", "torch.index_select", "torch.gather")


def pad_reflect2d(x: torch.Tensor, pad: int) -> torch.Tensor:
    return torch.nn.functional.pad(x, (pad, pad, pad, pad), mode="reflect")


def make_inputs(dims, dtype, mode, gen):
    x = maybe_outliers(randn((dims["B"], dims["C"], dims["H"], dims["W"]), dtype, gen), mode, gen)
    return (x, dims["P"])


def flops(dims, dtype):
    # a copy
    return 0.0


def min_bytes(dims, dtype):
    B, C, H, W, P = dims["B"], dims["C"], dims["H"], dims["W"], dims["P"]
    return B * C * (H * W + (H + 2 * P) * (W + 2 * P)) * float(elem_size(dtype))
