"""GroupNorm + SiLU on NCHW feature maps: the norm-activation pair of every SD-UNet/VAE ResNet block."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "groupnorm_silu"
CATEGORY = "fusion"
DESCRIPTION = """
GroupNorm with affine weight/bias followed by SiLU, as in the ResNet blocks of the Stable
Diffusion UNet and VAE (norm1 -> nonlinearity, 32 groups). Inputs x[B, C, H, W] contiguous NCHW,
weight[C], bias[C], all in the task dtype, and num_groups (an int dividing C). Group g of sample b
is the C/num_groups channels c in [g*C/num_groups, (g+1)*C/num_groups) over all H*W positions:
    mean[b, g] = average of x over the group,   var[b, g] = average of (x - mean)^2 (biased)
    v = (x[b, c, h, w] - mean[b, g]) / sqrt(var[b, g] + eps) * weight[c] + bias[c],   eps = 1e-5
    y[b, c, h, w] = v / (1 + exp(-v))
Output has x's shape and dtype; statistics and activation in fp32, one rounding. A group spans
up to millions of elements (VAE decoder), so the reduction must be split across programs to fill
the GPU. Feature maps have a per-channel offset; "outlier" mode adds rare values up to 1000x.
"""
ENTRY_POINT = "groupnorm_silu"
DTYPES = ("fp32", "fp16", "bf16")
EPS = 1e-5
SHAPES = [
    {"name": "sdxl_unet_down0_cfg", "dims": {"B": 2, "C": 320, "H": 128, "W": 128, "G": 32}, "weight": 0.3,
     "phase": "prefill", "source": "SDXL UNet down block 0 ResNet norm1 (320 ch, 128x128 latent at 1024px), CFG batch 2"},
    {"name": "sd15_unet_down1_cfg", "dims": {"B": 2, "C": 640, "H": 32, "W": 32, "G": 32}, "weight": 0.25,
     "phase": "prefill", "source": "SD-1.5 UNet down block 1 ResNet norm (640 ch, 32x32 at 512px), CFG batch 2"},
    {"name": "sd15_unet_mid_cfg_tail", "dims": {"B": 2, "C": 1280, "H": 8, "W": 8, "G": 32}, "weight": 0.15,
     "phase": "prefill", "source": "SD-1.5 UNet mid block ResNet norm (1280 ch, 8x8 at 512px), CFG batch 2 (small tail)"},
    {"name": "sd_vae_decoder_up3", "dims": {"B": 1, "C": 128, "H": 512, "W": 512, "G": 32}, "weight": 0.3,
     "phase": "prefill",
     "source": "SD VAE decoder last up block ResNet norm (128 ch, 512x512 output); bandwidth-bound (33.5M elements)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "C": 8, "H": 4, "W": 4, "G": 4}},
    {"name": "tail", "dims": {"B": 1, "C": 12, "H": 3, "W": 7, "G": 3}},
]
# fp32 statistics over big groups in a different order (~1e-6 relative); one rounding.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-4},
    "fp16": {"atol": 1e-3, "rtol": 2e-3},
    "bf16": {"atol": 8e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.group_norm", "torch.group_norm", "torch.nn.GroupNorm", "torch.native_group_norm",
             "torch.nn.functional.silu", "torch.nn.SiLU", "torch.sigmoid", "torch.var", "torch.var_mean",
             "torch.std", "torch.std_mean")


def groupnorm_silu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, num_groups: int) -> torch.Tensor:
    B, C, H, W = x.shape
    xg = x.float().reshape(B, num_groups, -1)
    mean = xg.mean(dim=-1, keepdim=True)
    d = xg - mean
    var = (d * d).mean(dim=-1, keepdim=True)
    v = (d * torch.rsqrt(var + EPS)).reshape(B, C, H, W)
    v = v * weight.float()[None, :, None, None] + bias.float()[None, :, None, None]
    return (v / (1.0 + torch.exp(-v))).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    B, C, H, W = dims["B"], dims["C"], dims["H"], dims["W"]
    x = randn((B, C, H, W), torch.float32, gen, std=1.5) + randn((1, C, 1, 1), torch.float32, gen, std=1.0)
    x = maybe_outliers(x.to(dtype), mode, gen)
    weight = randn((C,), dtype, gen, std=0.2, mean=1.0)
    bias = randn((C,), dtype, gen, std=0.2)
    return (x, weight, bias, dims["G"])


def flops(dims, dtype):
    # sum, subtract, square, sum, normalise, affine (2), silu (4): about 11 per element
    return 11.0 * dims["B"] * dims["C"] * dims["H"] * dims["W"]


def min_bytes(dims, dtype):
    e = elem_size(dtype)
    return 2.0 * dims["B"] * dims["C"] * dims["H"] * dims["W"] * e + 2.0 * dims["C"] * e
