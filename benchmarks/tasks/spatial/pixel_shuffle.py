"""Pixel shuffle (depth-to-space) of NCHW maps: the sub-pixel upsamplers of ESPCN, EDSR and SwinIR."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "pixel_shuffle"
CATEGORY = "spatial"
DESCRIPTION = """
F.pixel_shuffle(x, r) on a contiguous x[B, C * r * r, H, W]; output [B, C, H * r, W * r]:
    y[b, c, h * r + i, w * r + j] = x[b, c * r * r + i * r + j, h, w]     (0 <= i, j < r)
r is a Python int (2 or 3 here). Bit-exact in x's dtype (a permutation). "outlier" mode scales
rare values by up to 1000x.
"""
ENTRY_POINT = "pixel_shuffle"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "edsr_x4_stage1_1080p", "dims": {"B": 1, "C": 256, "H": 270, "W": 480, "R": 2}, "weight": 0.4,
     "phase": "prefill", "source": "EDSR x4 upsampler, first PixelShuffle(2) (1024 -> 256 ch) on a 1080p/4 "
                                   "270x480 map"},
    {"name": "swinir_x2_train_b32", "dims": {"B": 32, "C": 64, "H": 64, "W": 64, "R": 2}, "weight": 0.3,
     "phase": "train", "source": "SwinIR classical SR x2 upsampler (256 -> 64 ch), 64x64 training patches, batch 32"},
    {"name": "espcn_x3_1080p_tail", "dims": {"B": 1, "C": 1, "H": 360, "W": 640, "R": 3}, "weight": 0.3,
     "phase": "decode", "source": "ESPCN x3 (luma: 9 -> 1 ch) producing a 1080x1920 frame, batch 1 (r = 3)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "C": 3, "H": 8, "W": 8, "R": 2}},
    {"name": "tail", "dims": {"B": 1, "C": 2, "H": 7, "W": 11, "R": 3}},
]
# A permutation: exact.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 0.0},
    "fp16": {"atol": 0.0, "rtol": 0.0},
    "bf16": {"atol": 0.0, "rtol": 0.0},
}
# the whole job is moving data: PyTorch copies would do it (benchmarks/harness/calls.py, COPIED_SHARE)
MOVES_DATA = True
FORBIDDEN = ("torch.nn.functional.pixel_shuffle", "torch.nn.PixelShuffle", "torch.pixel_shuffle",
             "torch.nn.functional.pixel_unshuffle", "torch.pixel_unshuffle", "torch.nn.functional.fold")


def pixel_shuffle(x: torch.Tensor, r: int) -> torch.Tensor:
    return torch.nn.functional.pixel_shuffle(x, r)


def make_inputs(dims, dtype, mode, gen):
    R = dims["R"]
    x = randn((dims["B"], dims["C"] * R * R, dims["H"], dims["W"]), dtype, gen)
    return (maybe_outliers(x, mode, gen), R)


def flops(dims, dtype):
    # a copy
    return 0.0


def min_bytes(dims, dtype):
    return 2.0 * dims["B"] * dims["C"] * dims["R"] ** 2 * dims["H"] * dims["W"] * elem_size(dtype)
