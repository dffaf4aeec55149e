"""Constant padding of the last two dims of NCHW maps: TF-style SAME padding (timm tf_* models), YOLO letterboxing."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "pad_constant2d"
CATEGORY = "spatial"
DESCRIPTION = """
F.pad(x, (pad_left, pad_right, pad_top, pad_bottom), mode="constant", value=value) on a
contiguous NCHW map x[B, C, H, W]; output [B, C, H + pad_top + pad_bottom, W + pad_left +
pad_right]: x is copied to rows [pad_top, pad_top + H) and columns [pad_left, pad_left + W), every
other element is `value`. The pads are non-negative Python ints and value a Python float exactly
representable in every dtype (0.0 for SAME padding, 0.5 for a grey letterbox). Bit-exact in x's
dtype. "outlier" mode scales rare values by up to 1000x.
"""
ENTRY_POINT = "pad_constant2d"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "yolov5_letterbox_480x640_b32", "dims": {"B": 32, "C": 3, "H": 480, "W": 640, "PL": 0, "PR": 0,
                                                      "PT": 80, "PB": 80, "GREY": 1},
     "weight": 0.3, "phase": "prefill", "source": "YOLOv5 letterbox of 480x640 frames to 640x640 (80 rows grey "
                                                  "top and bottom), batch 32"},
    {"name": "tf_efficientnet_b0_dw_same_b256", "dims": {"B": 256, "C": 96, "H": 112, "W": 112, "PL": 0, "PR": 1,
                                                         "PT": 0, "PB": 1, "GREY": 0},
     "weight": 0.4, "phase": "prefill", "source": "timm tf_efficientnet_b0 stage-2 stride-2 depthwise conv SAME "
                                                  "padding (96 ch, 112x112, pad right/bottom 1), batch 256"},
    {"name": "tf_efficientnet_b0_stem_same_b1", "dims": {"B": 1, "C": 3, "H": 224, "W": 224, "PL": 0, "PR": 1,
                                                         "PT": 0, "PB": 1, "GREY": 0},
     "weight": 0.3, "phase": "decode", "source": "timm tf_efficientnet_b0 stem SAME padding (3 ch, 224 -> 225), "
                                                 "batch-1 inference (tail)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "C": 3, "H": 8, "W": 8, "PL": 1, "PR": 2, "PT": 3, "PB": 0, "GREY": 1}},
    {"name": "tail", "dims": {"B": 1, "C": 5, "H": 7, "W": 11, "PL": 0, "PR": 1, "PT": 0, "PB": 1, "GREY": 0}},
]
# A copy plus a fill: exact.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 0.0},
    "fp16": {"atol": 0.0, "rtol": 0.0},
    "bf16": {"atol": 0.0, "rtol": 0.0},
}
# the whole job is moving data: PyTorch copies would do it (benchmarks/harness/calls.py, COPIED_SHARE)
MOVES_DATA = True
FORBIDDEN = ("torch.nn.functional.pad", "torch.nn.ConstantPad2d", "torch.nn.ZeroPad2d", "torch.constant_pad_nd",
             "torch.cat", "torch.concat", "torch.stack", "torch.where")


def pad_constant2d(x: torch.Tensor, pad_left: int, pad_right: int, pad_top: int, pad_bottom: int,
                   value: float) -> torch.Tensor:
    return torch.nn.functional.pad(x, (pad_left, pad_right, pad_top, pad_bottom), mode="constant", value=value)


def make_inputs(dims, dtype, mode, gen):
    x = maybe_outliers(randn((dims["B"], dims["C"], dims["H"], dims["W"]), dtype, gen), mode, gen)
    value = 0.5 if dims["GREY"] else 0.0
    return (x, dims["PL"], dims["PR"], dims["PT"], dims["PB"], value)


def flops(dims, dtype):
    # a copy and a fill
    return 0.0


def min_bytes(dims, dtype):
    B, C, H, W = dims["B"], dims["C"], dims["H"], dims["W"]
    Ho, Wo = H + dims["PT"] + dims["PB"], W + dims["PL"] + dims["PR"]
    return B * C * (H * W + Ho * Wo) * float(elem_size(dtype))
