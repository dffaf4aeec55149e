"""2x nearest-neighbour upsampling of NCHW maps: the Upsample2D of SD-UNet and SD-VAE decoders, YOLO necks."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "upsample_nearest2x"
CATEGORY = "spatial"
DESCRIPTION = """
F.interpolate(x, scale_factor=2, mode="nearest") on a contiguous NCHW map x[B, C, H, W]:
    y[b, c, i, j] = x[b, c, i // 2, j // 2]
Output [B, C, 2H, 2W] in x's dtype, bit-exact (a copy: each input element lands in a 2x2 block).
"outlier" mode scales rare values by up to 1000x.
"""
ENTRY_POINT = "upsample_nearest2x"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "sd_vae_decoder_256ch_256px_b4", "dims": {"B": 4, "C": 256, "H": 256, "W": 256}, "weight": 0.4,
     "phase": "prefill", "source": "SD VAE decoder up-block 2 upsample (256 ch, 256 -> 512) decoding 512 px "
                                   "images, batch 4"},
    {"name": "sd15_unet_up_1280ch_cfg", "dims": {"B": 2, "C": 1280, "H": 16, "W": 16}, "weight": 0.3,
     "phase": "prefill", "source": "SD 1.5 UNet up-block Upsample2D (1280 ch, 16 -> 32 at 512 px), batch 2 (CFG)"},
    {"name": "yolov3_416_neck_tail", "dims": {"B": 1, "C": 256, "H": 13, "W": 13}, "weight": 0.3, "phase": "decode",
     "source": "YOLOv3 at 416 px neck upsample (256 ch, 13 -> 26, odd), batch-1 inference"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "C": 3, "H": 8, "W": 8}},
    {"name": "tail", "dims": {"B": 1, "C": 5, "H": 7, "W": 11}},
]
# A copy: exact.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 0.0},
    "fp16": {"atol": 0.0, "rtol": 0.0},
    "bf16": {"atol": 0.0, "rtol": 0.0},
}
# the whole job is moving data: PyTorch copies would do it (benchmarks/harness/calls.py, COPIED_SHARE)
MOVES_DATA = True
FORBIDDEN = ("torch.nn.functional.interpolate", "torch.nn.functional.upsample", "torch.nn.functional.upsample_nearest",
             "torch.nn.Upsample", "torch.nn.UpsamplingNearest2d", "torch.repeat_interleave",
             "torch.Tensor.repeat_interleave", "torch.Tensor.repeat", "torch.kron", "torch.nn.functional.pixel_shuffle")


def upsample_nearest2x(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.interpolate(x, scale_factor=2.0, mode="nearest")


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["B"], dims["C"], dims["H"], dims["W"]), dtype, gen)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # a copy
    return 0.0


def min_bytes(dims, dtype):
    return 5.0 * dims["B"] * dims["C"] * dims["H"] * dims["W"] * elem_size(dtype)
