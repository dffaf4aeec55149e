"""Cyclic shift of channels-last feature maps (torch.roll over H and W): Swin Transformer's shifted windows."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "swin_cyclic_roll"
CATEGORY = "spatial"
DESCRIPTION = """
Swin's cyclic shift, torch.roll(x, shifts=(-s, -s), dims=(1, 2)), on a contiguous channels-last
map x[B, H, W, C] with 0 < s < min(H, W):
    y[b, h, w, c] = x[b, (h + s) mod H, (w + s) mod W, c]
Output has x's shape; bit-exact (a permutation). s is a Python int (window_size // 2). "outlier"
mode scales rare values by up to 1000x.
"""
ENTRY_POINT = "swin_cyclic_roll"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "swin_b_224_stage1_b128", "dims": {"B": 128, "H": 56, "W": 56, "C": 128, "S": 3}, "weight": 0.4,
     "phase": "prefill", "source": "Swin-B at 224 px stage 1 (56x56x128, window 7, shift 3), batch 128"},
    {"name": "swin_l_384_stage1_b32", "dims": {"B": 32, "H": 96, "W": 96, "C": 192, "S": 6}, "weight": 0.3,
     "phase": "prefill", "source": "Swin-L at 384 px stage 1 (96x96x192, window 12, shift 6), batch 32"},
    {"name": "swin_t_224_stage3_b1_tail", "dims": {"B": 1, "H": 14, "W": 14, "C": 384, "S": 3}, "weight": 0.3,
     "phase": "decode", "source": "Swin-T at 224 px stage 3 (14x14x384, shift 3), batch-1 inference"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "H": 8, "W": 8, "C": 16, "S": 2}},
    {"name": "tail", "dims": {"B": 1, "H": 7, "W": 9, "C": 12, "S": 3}},
]
# A permutation: exact.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 0.0},
    "fp16": {"atol": 0.0, "rtol": 0.0},
    "bf16": {"atol": 0.0, "rtol": 0.0},
}
# the whole job is moving data: PyTorch copies would do it (benchmarks/harness/calls.py, COPIED_SHARE)
MOVES_DATA = True
FORBIDDEN = ("torch.roll", "torch.Tensor.roll", "torch.cat", "torch.concat", "torch.stack", "torch.index_select",
             "torch.gather", "torch.take", "torch.flip")


def swin_cyclic_roll(x: torch.Tensor, shift: int) -> torch.Tensor:
    if not 0 < shift < min(x.shape[1], x.shape[2]):  # the contract; drawn shapes keep it
        raise ValueError(f"needs 0 < s < min(H, W), got s={shift}, H={x.shape[1]}, W={x.shape[2]}")
    return torch.roll(x, shifts=(-shift, -shift), dims=(1, 2))


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["B"], dims["H"], dims["W"], dims["C"]), dtype, gen)
    return (maybe_outliers(x, mode, gen), dims["S"])


def flops(dims, dtype):
    # a copy
    return 0.0


def min_bytes(dims, dtype):
    return 2.0 * dims["B"] * dims["H"] * dims["W"] * dims["C"] * elem_size(dtype)
