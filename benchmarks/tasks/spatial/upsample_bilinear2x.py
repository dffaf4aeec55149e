"""2x bilinear upsampling (align_corners=False) of NCHW maps: FPN / UPerNet / DeepLab decoder heads."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "upsample_bilinear2x"
CATEGORY = "spatial"
DESCRIPTION = """
F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False) on a contiguous NCHW map
x[B, C, H, W]; output [B, C, 2H, 2W]. For output row i the source coordinate is
    s = max((i + 0.5) / 2 - 0.5, 0),   h0 = floor(s),   h1 = min(h0 + 1, H - 1),   lh = s - h0
(likewise w0, w1, lw for column j), and
    y[b, c, i, j] = (1 - lh) * ((1 - lw) * x[h0, w0] + lw * x[h0, w1])
                  +      lh  * ((1 - lw) * x[h1, w0] + lw * x[h1, w1])
So interior outputs weight their neighbours 0.75 / 0.25 and the edges clamp. Compute in fp32 and
round once to x's dtype. "outlier" mode scales rare values by up to 1000x.
"""
ENTRY_POINT = "upsample_bilinear2x"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "upernet_fpn_512ch_64to128_b16", "dims": {"B": 16, "C": 512, "H": 64, "W": 64}, "weight": 0.4,
     "phase": "prefill", "source": "UPerNet FPN top-down path (512 ch) 1/8 -> 1/4 at 512x512 crops (64 -> 128), "
                                   "batch 16"},
    {"name": "upernet_fpn_512ch_16to32_b16", "dims": {"B": 16, "C": 512, "H": 16, "W": 16}, "weight": 0.3,
     "phase": "prefill", "source": "UPerNet FPN top-down path (512 ch) 1/32 -> 1/16 at 512x512 crops, batch 16"},
    {"name": "deeplabv3p_769_tail_b1", "dims": {"B": 1, "C": 256, "H": 97, "W": 97}, "weight": 0.3,
     "phase": "decode", "source": "DeepLabV3+ decoder features (256 ch, 97x97 for a 769x769 Cityscapes crop), "
                                  "batch-1 inference (odd size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "C": 3, "H": 8, "W": 8}},
    {"name": "tail", "dims": {"B": 1, "C": 5, "H": 7, "W": 11}},
]
# fp32: two-level lerps with weights 0.25 / 0.75 (exact in binary); association changes an ulp.
# With outliers an output near 0 can be the sum of weighted neighbours of 1000: each lerp rounds to
# ~2^-24 of the weighted magnitudes, in either order, so fp32 adds terms x 2^-20, terms being the
# same interpolation of |x| (an H200 sweep, 2026-12-03: 3.9e-6 off at -0.05 in outlier mode, the
# honest solution). fp16/bf16: one rounding of the fp32 value on each side.
TOLERANCE = {
    "fp32": {"atol": 1e-6, "rtol": 1e-5, "terms": 2**-20},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.interpolate", "torch.nn.functional.upsample", "torch.nn.functional.upsample_bilinear",
             "torch.nn.Upsample", "torch.nn.UpsamplingBilinear2d", "torch.nn.functional.grid_sample",
             "torch.nn.functional.affine_grid", "torch.lerp", "torch.nn.functional.conv_transpose2d")


def upsample_bilinear2x(x: torch.Tensor) -> torch.Tensor:
    y = torch.nn.functional.interpolate(x.float(), scale_factor=2.0, mode="bilinear", align_corners=False)
    return y.to(x.dtype)


def error_terms(x):
    """The bilinear interpolation of |x| per output element (see TOLERANCE)."""
    return torch.nn.functional.interpolate(
        x.float().abs(), scale_factor=2.0, mode="bilinear", align_corners=False
    )


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["B"], dims["C"], dims["H"], dims["W"]), dtype, gen)
    return (maybe_outliers(x, mode, gen),)


def _numel_out(dims):
    return dims["B"] * dims["C"] * 4 * dims["H"] * dims["W"]


def flops(dims, dtype):
    # three lerps (2 multiplies + add each, folded) per output: about 9
    return 9.0 * _numel_out(dims)


def min_bytes(dims, dtype):
    return 1.25 * _numel_out(dims) * elem_size(dtype)
