"""1x1 convolution on NCHW maps (a per-image GEMM): ResNet bottleneck projections, SD-UNet proj_in/proj_out."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn
from benchmarks.tolerances import sum_abs_terms

NAME = "conv2d_1x1"
CATEGORY = "convolution"
DESCRIPTION = """
Pointwise convolution without bias (F.conv2d(x, weight)) of a contiguous NCHW map x[B, Cin, H, W]
with weight[Cout, Cin, 1, 1]:
    y[b, o, i, j] = sum_c weight[o, c, 0, 0] * x[b, c, i, j]
i.e. for every image b, Y_b[Cout, H*W] = W[Cout, Cin] @ X_b[Cin, H*W] with X_b the image's
contiguous [Cin, H*W] slab. Output [B, Cout, H, W] in the inputs' dtype. Accumulate in fp32 on
tensor cores; fp32 means IEEE fp32 products (TF32 is rejected; the reference disables cuDNN's
TF32 default). The weight is scaled by 1/sqrt(Cin) so y is O(1); "outlier" mode puts rare
10-1000x values in x (activation outliers; weights stay well-scaled: an outlier activation times
an outlier weight makes terms of ~3e4 whose cancellation no tolerance relative to |y| can judge).
On the CPU interpreter bf16 tl.dot is computed wrongly, so bf16 is checked on GPU only.
"""
ENTRY_POINT = "conv2d_1x1"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "resnet50_layer1_expand_b256", "dims": {"B": 256, "Cin": 64, "Cout": 256, "H": 56, "W": 56},
     "weight": 0.3, "phase": "prefill", "source": "ResNet-50 layer1 bottleneck expansion 1x1 (64 -> 256, 56x56), "
                                                  "batch 256"},
    {"name": "resnet50_layer4_reduce_b256", "dims": {"B": 256, "Cin": 2048, "Cout": 512, "H": 7, "W": 7},
     "weight": 0.3, "phase": "prefill", "source": "ResNet-50 layer4 bottleneck reduction 1x1 (2048 -> 512, 7x7 = 49 "
                                                  "px, tail), batch 256"},
    {"name": "sd15_unet_proj_in_cfg", "dims": {"B": 2, "Cin": 320, "Cout": 320, "H": 64, "W": 64},
     "weight": 0.2, "phase": "prefill", "source": "SD 1.5 UNet transformer proj_in 1x1 conv (320 -> 320, 64x64), "
                                                  "batch 2 (CFG)"},
    {"name": "resnet50_layer3_reduce_b1", "dims": {"B": 1, "Cin": 1024, "Cout": 256, "H": 14, "W": 14},
     "weight": 0.2, "phase": "decode", "source": "ResNet-50 layer3 bottleneck reduction 1x1 (1024 -> 256, 14x14), "
                                                 "batch-1 inference"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"B": 2, "Cin": 16, "Cout": 32, "H": 8, "W": 8}},
    {"name": "tail", "dims": {"B": 2, "Cin": 20, "Cout": 12, "H": 7, "W": 5}},
]
# y is O(1), a sum of Cin products. fp32: order changes results by ~1e-6, TF32 by ~5e-4 (rejected).
# fp16/bf16: one rounding of an fp32 accumulation whose order may differ.
# "terms": each output is a sum of Cin*k*k products; outlier inputs make small outputs out of large
# terms, and fp32 accumulation in another order than the reference's then differs by about
# sqrt(K) * eps32 * sum |terms| (2^-16 for K up to 65536); error_terms gives sum |terms|.
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4, "terms": 2**-16},
    "fp16": {"atol": 5e-3, "rtol": 5e-3, "terms": 2**-16},
    "bf16": {"atol": 2e-2, "rtol": 2e-2, "terms": 2**-16},
}
FORBIDDEN = ("torch.nn.functional.conv2d", "torch.conv2d", "torch.nn.Conv2d", "torch.convolution",
             "torch._convolution", "torch.cudnn_convolution", "torch.matmul", "torch.mm", "torch.bmm",
             "torch.baddbmm", "torch.einsum", "torch.tensordot", "torch.nn.functional.linear", "torch._scaled_mm")


def conv2d_1x1(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    # fp32 accumulation, one rounding to the output dtype. cuDNN computes fp32 convolutions in
    # TF32 by default and may accumulate half inputs in lower precision; the contract is IEEE fp32.
    prev = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    try:
        return torch.nn.functional.conv2d(x.float(), weight.float()).to(x.dtype)
    finally:
        torch.backends.cudnn.allow_tf32 = prev


def error_terms(x, weight):
    """sum |x| |w| per output element (see TOLERANCE)."""
    return sum_abs_terms(conv2d_1x1, (x, weight))


def make_inputs(dims, dtype, mode, gen):
    B, Cin, Cout, H, W = dims["B"], dims["Cin"], dims["Cout"], dims["H"], dims["W"]
    x = maybe_outliers(randn((B, Cin, H, W), dtype, gen), mode, gen)
    weight = randn((Cout, Cin, 1, 1), torch.float32, gen) * Cin ** -0.5
    return (x, weight.to(dtype))


def flops(dims, dtype):
    return 2.0 * dims["B"] * dims["Cout"] * dims["H"] * dims["W"] * dims["Cin"]


def min_bytes(dims, dtype):
    B, Cin, Cout, H, W = dims["B"], dims["Cin"], dims["Cout"], dims["H"], dims["W"]
    return (B * Cin * H * W + Cout * Cin + B * Cout * H * W) * float(elem_size(dtype))
