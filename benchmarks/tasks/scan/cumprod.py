"""Inclusive cumulative product along the last dimension: volume-rendering transmittance (NeRF) and noise schedules."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, rand

NAME = "cumprod"
CATEGORY = "scan"
DESCRIPTION = """
Inclusive cumulative product along the last dimension of x[M, N]:
    y[i, j] = prod_{k <= j} x[i, k]
Output has x's shape and dtype. Multiply in fp32 across the whole row (the carry between chunks
included) and round each output once. Inputs are survival
factors 1 - alpha in (0.85, 1], as along a NeRF ray or a diffusion schedule, so products decay
smoothly towards ~1e-5; "outlier" mode multiplies rare factors by 10-1000x (later products of the
row jump by that factor, and can overflow fp16 to +inf, as the fp32 value rounded to fp16 does).
"""
ENTRY_POINT = "cumprod"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "nerf_fine_rays_b65536", "dims": {"M": 65536, "N": 192}, "weight": 0.4, "phase": "train",
     "source": "NeRF transmittance: 65536 rays x 192 samples (64 coarse + 128 fine) per training batch"},
    {"name": "nerf_render_chunk", "dims": {"M": 4096, "N": 192}, "weight": 0.3, "phase": "decode",
     "source": "NeRF transmittance at render time: 4096-ray chunk x 192 samples"},
    {"name": "ddpm_alphas_cumprod_tail", "dims": {"M": 1, "N": 1000}, "weight": 0.3, "phase": "decode",
     "source": "DDPM / SD noise schedule alphas_cumprod over 1000 steps (one row, tail size; launch-bound)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# Each fp32 multiply rounds once, so fp32 products of j factors in different associations agree
# to ~j * 6e-8 relative: 6e-5 at j = 1000 in the worst case, ~2e-6 typically.
# fp16/bf16: one rounding of that per output. atol covers fp16 subnormals (spacing 6e-8).
TOLERANCE = {
    "fp32": {"atol": 1e-7, "rtol": 1e-4},
    "fp16": {"atol": 1e-7, "rtol": 2e-3},
    "bf16": {"atol": 1e-7, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.cumprod", "torch.Tensor.cumprod", "torch.prod", "torch.cumsum", "torch.logcumsumexp",
             "torch.exp", "torch.log")


def cumprod(x: torch.Tensor) -> torch.Tensor:
    return torch.cumprod(x.float(), dim=-1).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = rand((dims["M"], dims["N"]), torch.float32, gen, low=0.85, high=1.0)
    # the survival factor is 1 - alpha: close to 1, never above it
    return (maybe_outliers(x, mode, gen).to(dtype),)


def flops(dims, dtype):
    # one multiply per element
    return 1.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
