"""3x3 convolution, stride 1, pad 1, with bias, on NCHW maps: SD-UNet ResNet blocks and ResNet-50 layers."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn
from benchmarks.tolerances import sum_abs_terms

NAME = "conv2d_3x3"
CATEGORY = "convolution"
DESCRIPTION = """
2-D convolution (F.conv2d(x, weight, bias, stride=1, padding=1)) of a contiguous NCHW map
x[B, Cin, H, W] with weight[Cout, Cin, 3, 3] and bias[Cout]:
    y[b, o, i, j] = bias[o] + sum_{c, dh, dw} weight[o, c, dh, dw] * x[b, c, i + dh - 1, j + dw - 1]
(taps outside the map are 0). Output [B, Cout, H, W] in the inputs' dtype (all three share it).
Accumulate in fp32 -- in effect a GEMM with K = 9 * Cin, to be done on tensor cores. fp32 means
IEEE fp32 products: TF32 (10-bit mantissa) changes the answer and the tolerance rejects it (the
reference disables cuDNN's TF32 default). The weight is scaled by 1/sqrt(9 * Cin) so y is O(1);
"outlier" mode puts rare 10-1000x values in x (activation outliers; weights stay
well-scaled: an outlier activation times an outlier weight makes terms of ~2e4 whose cancellation
no fp32 tolerance relative to |y| can judge). On the CPU interpreter bf16 tl.dot is
computed wrongly, so bf16 is checked on GPU only.
"""
ENTRY_POINT = "conv2d_3x3"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "sdxl_unet_320ch_128px_cfg", "dims": {"B": 2, "Cin": 320, "Cout": 320, "H": 128, "W": 128},
     "weight": 0.3, "phase": "prefill",
     "source": "SDXL UNet down-block-0 ResNet conv (320 -> 320, 128x128 latent at 1024 px), batch 2 (CFG)"},
    {"name": "sd15_unet_320ch_64px_cfg", "dims": {"B": 2, "Cin": 320, "Cout": 320, "H": 64, "W": 64},
     "weight": 0.3, "phase": "prefill",
     "source": "SD 1.5 UNet down-block-0 ResNet conv (320 -> 320, 64x64 latent at 512 px), batch 2 (CFG)"},
    {"name": "resnet50_layer1_b256", "dims": {"B": 256, "Cin": 64, "Cout": 64, "H": 56, "W": 56},
     "weight": 0.2, "phase": "prefill", "source": "ResNet-50 layer1 bottleneck 3x3 conv (64 -> 64, 56x56), batch 256"},
    {"name": "resnet50_layer3_b1_tail", "dims": {"B": 1, "Cin": 256, "Cout": 256, "H": 14, "W": 14},
     "weight": 0.2, "phase": "decode",
     "source": "ResNet-50 layer3 bottleneck 3x3 conv (256 -> 256, 14x14 = 196 px), batch-1 inference (tail)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"B": 1, "Cin": 8, "Cout": 16, "H": 8, "W": 8}},
    {"name": "tail", "dims": {"B": 2, "Cin": 5, "Cout": 6, "H": 7, "W": 9}},
]
# y is O(1), a sum of 9 * Cin products. fp32: accumulation order changes results by ~1e-6, while
# TF32 inputs (unit roundoff 2^-11) leave errors of ~5e-4, which these bounds reject. fp16/bf16:
# one rounding of an fp32 accumulation (2^-11 / 2^-8 relative) whose order may differ.
# "terms": each output is a sum of Cin*k*k products; outlier inputs make small outputs out of large
# terms, and fp32 accumulation in another order than the reference's then differs by about
# sqrt(K) * eps32 * sum |terms| (2^-16 for K up to 65536); error_terms gives sum |terms|.
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4, "terms": 2**-16},
    "fp16": {"atol": 5e-3, "rtol": 5e-3, "terms": 2**-16},
    "bf16": {"atol": 2e-2, "rtol": 2e-2, "terms": 2**-16},
}
FORBIDDEN = ("torch.nn.functional.conv2d", "torch.conv2d", "torch.nn.Conv2d", "torch.convolution",
             "torch._convolution", "torch.cudnn_convolution", "torch.nn.functional.unfold", "torch.Tensor.unfold",
             "torch.nn.functional.fold", "torch.matmul", "torch.mm", "torch.bmm", "torch.einsum",
             "torch.tensordot", "torch.nn.functional.linear", "torch.conv_transpose2d")


def conv2d_3x3(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    # fp32 accumulation, one rounding to the output dtype. cuDNN computes fp32 convolutions in
    # TF32 by default and may accumulate half inputs in lower precision; the contract is IEEE fp32.
    prev = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    try:
        return torch.nn.functional.conv2d(x.float(), weight.float(), bias.float(), stride=1, padding=1).to(x.dtype)
    finally:
        torch.backends.cudnn.allow_tf32 = prev


def error_terms(x, weight, bias):
    """sum |x| |w| + |bias| per output element (see TOLERANCE)."""
    return sum_abs_terms(conv2d_3x3, (x, weight, bias))


def make_inputs(dims, dtype, mode, gen):
    B, Cin, Cout, H, W = dims["B"], dims["Cin"], dims["Cout"], dims["H"], dims["W"]
    x = maybe_outliers(randn((B, Cin, H, W), dtype, gen), mode, gen)
    weight = randn((Cout, Cin, 3, 3), torch.float32, gen) * (9 * Cin) ** -0.5
    bias = randn((Cout,), dtype, gen, std=0.1)
    return (x, weight.to(dtype), bias)


def flops(dims, dtype):
    return 2.0 * dims["B"] * dims["Cout"] * dims["H"] * dims["W"] * dims["Cin"] * 9


def min_bytes(dims, dtype):
    B, Cin, Cout, H, W = dims["B"], dims["Cin"], dims["Cout"], dims["H"], dims["W"]
    return (B * Cin * H * W + Cout * Cin * 9 + Cout + B * Cout * H * W) * float(elem_size(dtype))
