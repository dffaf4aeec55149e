"""Mamba-2 gated group RMSNorm: x * silu(z), then RMSNorm over groups of channels."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "mamba2_gated_rmsnorm"
CATEGORY = "fusion"
DESCRIPTION = """
The gated RMSNorm at the end of a Mamba-2 mixer (RMSNormGated with norm_before_gate=False): the SSD
output is gated by SiLU of the z branch, then RMS-normalised over each group of G consecutive
channels (ngroups = E / G) and scaled by a weight. Token-major inputs x[M, E], z[M, E], w[E], all
in the task dtype; G divides E:
    h[i, c]   = x[i, c] * z[i, c] / (1 + exp(-z[i, c]))            fp32, not rounded
    rstd[i,g] = 1 / sqrt(sum_{c in group g} h[i, c]^2 / G + eps),   eps = 1e-5
    out[i, c] = h[i, c] * rstd[i, c // G] * w[c]                     fp32, rounded once
Output is [M, E] in the task dtype. "outlier" mode puts rare values up to 1000x in x and z.
"""
ENTRY_POINT = "mamba2_gated_rmsnorm"
DTYPES = ("fp32", "fp16", "bf16")
EPS = 1e-5
SHAPES = [
    {"name": "mamba2_2p7b_prefill", "dims": {"M": 8192, "E": 5120, "G": 5120}, "weight": 0.3, "phase": "prefill",
     "source": "Mamba-2-2.7B gated norm (d_inner 5120, ngroups 1), 8192-token prefill"},
    {"name": "codestral_mamba_7b_prefill", "dims": {"M": 4096, "E": 8192, "G": 1024}, "weight": 0.3,
     "phase": "prefill",
     "source": "Mamba-Codestral-7B gated norm (d_inner 8192, n_groups 8 -> groups of 1024), 4096-token prefill"},
    {"name": "codestral_mamba_7b_decode", "dims": {"M": 32, "E": 8192, "G": 1024}, "weight": 0.25, "phase": "decode",
     "source": "Mamba-Codestral-7B gated norm, batch-32 decode"},
    {"name": "mamba2_1p3b_decode_tail", "dims": {"M": 13, "E": 4096, "G": 4096}, "weight": 0.15, "phase": "decode",
     "source": "Mamba-2-1.3B gated norm (d_inner 4096, ngroups 1), batch 13 decode (tail size)"},
]
CPU_SHAPES = [
    {"name": "grouped", "dims": {"M": 4, "E": 256, "G": 64}},
    {"name": "tail", "dims": {"M": 7, "E": 1000, "G": 500}},
]
# fp32 statistics in a different order (~1e-6 relative), one rounding: one ulp apart.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-4},
    "fp16": {"atol": 1e-3, "rtol": 2e-3},
    "bf16": {"atol": 8e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.rms_norm", "torch.rms_norm", "torch.nn.RMSNorm", "torch.norm",
             "torch.linalg.norm", "torch.linalg.vector_norm", "torch.nn.functional.silu", "torch.sigmoid",
             "torch.nn.functional.group_norm")


def mamba2_gated_rmsnorm(x: torch.Tensor, z: torch.Tensor, weight: torch.Tensor, group_size: int) -> torch.Tensor:
    M, E = x.shape
    zf = z.float()
    h = (x.float() * (zf / (1.0 + torch.exp(-zf)))).reshape(M, E // group_size, group_size)
    rstd = torch.rsqrt((h * h).mean(dim=-1, keepdim=True) + EPS)
    return (h * rstd).reshape(M, E).mul(weight.float()).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    M, E = dims["M"], dims["E"]
    x = maybe_outliers(randn((M, E), dtype, gen), mode, gen)
    z = maybe_outliers(randn((M, E), dtype, gen, std=2.0), mode, gen)
    weight = randn((E,), dtype, gen, std=0.1, mean=1.0)
    return (x, z, weight, dims["G"])


def flops(dims, dtype):
    # silu (4) and the gate product, square, sum, scale by rstd, *w: 9 per element
    return 9.0 * dims["M"] * dims["E"]


def min_bytes(dims, dtype):
    # read x, z, w; write out
    e = elem_size(dtype)
    return 3.0 * dims["M"] * dims["E"] * e + dims["E"] * e
