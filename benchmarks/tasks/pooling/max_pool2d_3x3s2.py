"""3x3 / stride-2 / pad-1 max pooling on NCHW maps: the ResNet stem pool."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "max_pool2d_3x3s2"
CATEGORY = "pooling"
DESCRIPTION = """
2-D max pooling, kernel 3x3, stride 2, padding 1 (F.max_pool2d(x, 3, 2, 1)) on a contiguous
NCHW map x[B, C, H, W]. Output [B, C, Ho, Wo] with Ho = floor((H - 1) / 2) + 1 (same for W):
    y[b, c, i, j] = max over dh, dw in {0, 1, 2} of x[b, c, 2i - 1 + dh, 2j - 1 + dw]
where taps outside the map are ignored (padding acts as -inf, never as 0: maps with all-negative
windows must not come out 0). Values only, no indices; bit-exact, in x's dtype. "outlier" mode
scales rare values by up to 1000x.
"""
ENTRY_POINT = "max_pool2d_3x3s2"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "resnet50_stem_b256", "dims": {"B": 256, "C": 64, "H": 112, "W": 112}, "weight": 0.4,
     "phase": "train", "source": "ResNet-50 stem max-pool (64 ch, 112x112 -> 56x56), batch 256 training"},
    {"name": "resnet50_stem_b1", "dims": {"B": 1, "C": 64, "H": 112, "W": 112}, "weight": 0.3, "phase": "decode",
     "source": "ResNet-50 stem max-pool, batch-1 inference (latency)"},
    {"name": "maskrcnn_r50_stem_800x1333", "dims": {"B": 2, "C": 64, "H": 400, "W": 667}, "weight": 0.3,
     "phase": "prefill", "source": "Mask R-CNN R50-FPN stem max-pool at 800x1333 input (400x667 -> 200x334, odd W), "
                                   "batch 2"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "C": 3, "H": 16, "W": 16}},
    {"name": "tail", "dims": {"B": 1, "C": 5, "H": 13, "W": 11}},
]
# A max selects one input value: exact.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 0.0},
    "fp16": {"atol": 0.0, "rtol": 0.0},
    "bf16": {"atol": 0.0, "rtol": 0.0},
}
FORBIDDEN = ("torch.nn.functional.max_pool2d", "torch.max_pool2d", "torch.nn.MaxPool2d",
             "torch.nn.functional.max_pool2d_with_indices", "torch.nn.functional.adaptive_max_pool2d",
             "torch.nn.functional.unfold", "torch.Tensor.unfold", "torch.amax", "torch.max", "torch.maximum")


def max_pool2d_3x3s2(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.max_pool2d(x, kernel_size=3, stride=2, padding=1)


def make_inputs(dims, dtype, mode, gen):
    # centred below zero, so that many windows are all-negative (a 0-padded pool gets them wrong)
    x = randn((dims["B"], dims["C"], dims["H"], dims["W"]), dtype, gen, mean=-1.0)
    return (maybe_outliers(x, mode, gen),)


def _out(n):
    return (n - 1) // 2 + 1


def flops(dims, dtype):
    # 8 compares per output
    return 8.0 * dims["B"] * dims["C"] * _out(dims["H"]) * _out(dims["W"])


def min_bytes(dims, dtype):
    B, C, H, W = dims["B"], dims["C"], dims["H"], dims["W"]
    return (B * C * H * W + B * C * _out(H) * _out(W)) * float(elem_size(dtype))
