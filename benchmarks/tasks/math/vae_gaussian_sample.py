"""Reparameterised sample of the VAE posterior: mean + exp(0.5 * clamp(logvar)) * noise (SD / SD3 / Flux VAEs)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "vae_gaussian_sample"
CATEGORY = "math"
DESCRIPTION = """
Sampling of a diagonal-Gaussian VAE posterior (diffusers' DiagonalGaussianDistribution.sample)
from the encoder's moments[B, 2C, H, W] (channels [0, C) are the mean, [C, 2C) the log-variance)
and given standard-normal noise[B, C, H, W]:
    logvar = min(max(moments[:, C:], -30), 20)
    z      = moments[:, :C] + exp(0.5 * logvar) * noise
Output z is [B, C, H, W] in the inputs' dtype. Compute in fp32 and round once. "outlier" mode
scales rare moments and noise values by 10-1000x: the clamp must bound the log-variance (z can
then overflow fp16, to +-inf, exactly where the fp32 value rounded to fp16 does).
"""
ENTRY_POINT = "vae_gaussian_sample"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "flux_vae_encode_1024px_b32", "dims": {"B": 32, "C": 16, "H": 128, "W": 128}, "weight": 0.4,
     "phase": "prefill", "source": "FLUX.1 / SD3 VAE (16 latent channels) encoding 1024 px images, batch 32"},
    {"name": "sd15_vae_encode_512px_b256", "dims": {"B": 256, "C": 4, "H": 64, "W": 64}, "weight": 0.4,
     "phase": "train", "source": "SD 1.5 VAE (4 latent channels) encoding 512 px images, batch 256 training"},
    {"name": "sd2_vae_encode_768px_tail", "dims": {"B": 13, "C": 4, "H": 96, "W": 96}, "weight": 0.2,
     "phase": "prefill", "source": "SD 2.x VAE encoding 768 px images (96x96 latents), batch 13 (tail)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "C": 4, "H": 8, "W": 8}},
    {"name": "tail", "dims": {"B": 3, "C": 3, "H": 7, "W": 9}},
]
# fp32: exp differs by an ulp or two between implementations; the sum can cancel, which atol
# absorbs. fp16/bf16: one rounding of the fp32 result on each side.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.addcmul", "torch.normal", "torch.randn_like", "torch.distributions")


def vae_gaussian_sample(moments: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    C = noise.shape[1]
    m = moments.float()
    logvar = torch.clamp(m[:, C:], -30.0, 20.0)
    return (m[:, :C] + torch.exp(0.5 * logvar) * noise.float()).to(moments.dtype)


def make_inputs(dims, dtype, mode, gen):
    B, C, H, W = dims["B"], dims["C"], dims["H"], dims["W"]
    mean = randn((B, C, H, W), torch.float32, gen)
    # posterior log-variances sit well below zero (std ~ 0.05), with some spread
    logvar = randn((B, C, H, W), torch.float32, gen, std=2.0, mean=-6.0)
    moments = maybe_outliers(torch.cat([mean, logvar], dim=1).to(dtype), mode, gen)
    noise = maybe_outliers(randn((B, C, H, W), dtype, gen), mode, gen)
    return (moments, noise)


def flops(dims, dtype):
    # clamp (2), scale, exp, multiply, add: 6 per output element
    return 6.0 * dims["B"] * dims["C"] * dims["H"] * dims["W"]


def min_bytes(dims, dtype):
    # read moments (2C planes) and noise (C), write z (C)
    return 4.0 * dims["B"] * dims["C"] * dims["H"] * dims["W"] * elem_size(dtype)
