"""Residual add fused with RMSNorm, as between the sublayers of Llama/Qwen/Mistral."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "add_rmsnorm"
CATEGORY = "fusion"
DESCRIPTION = """
Residual add followed by RMSNorm over the last dimension, for x[M, N], residual[M, N], w[N]:
    h[i, j]    = x[i, j] + residual[i, j]          rounded to x's dtype (the new residual stream)
    rstd[i]    = 1 / sqrt(sum_j h[i, j]^2 / N + eps),   eps = 1e-5   (from the rounded h, in fp32)
    out[i, j]  = h[i, j] * rstd[i] * w[j]          in fp32, rounded once
Returns the tuple (out, h), both [M, N] in x's dtype, as vLLM's fused_add_rms_norm produces them;
the inputs are not modified. In "outlier" mode both x and residual carry rare values up to 1000x.
"""
ENTRY_POINT = "add_rmsnorm"
DTYPES = ("fp32", "fp16", "bf16")
EPS = 1e-5
SHAPES = [
    {
        "name": "llama3_8b_prefill",
        "dims": {"M": 8192, "N": 4096},
        "weight": 0.4,
        "phase": "prefill",
        "source": "Llama-3-8B post-attention residual add + RMSNorm (hidden 4096), 8192-token prefill",
    },
    {
        "name": "llama3_70b_decode",
        "dims": {"M": 32, "N": 8192},
        "weight": 0.3,
        "phase": "decode",
        "source": "Llama-3-70B residual add + RMSNorm (hidden 8192), batch-32 decode",
    },
    {
        "name": "qwen2_7b_prefill_tail",
        "dims": {"M": 4093, "N": 3584},
        "weight": 0.3,
        "phase": "prefill",
        "source": "Qwen2-7B residual add + RMSNorm (hidden 3584), 4093-token prefill (tail size)",
    },
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# h is one rounding of an exact fp32 sum: bit-equal in practice. out: fp32 statistics in a
# different order (~1e-6 relative), one rounding, so one ulp (fp16 2^-10, bf16 2^-7) apart.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-4},
    "fp16": {"atol": 1e-3, "rtol": 2e-3},
    "bf16": {"atol": 8e-3, "rtol": 1.6e-2},
}
FORBIDDEN = (
    "torch.nn.functional.rms_norm",
    "torch.rms_norm",
    "torch.nn.RMSNorm",
    "torch.norm",
    "torch.linalg.norm",
    "torch.linalg.vector_norm",
)


def add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    h = (x.float() + residual.float()).to(x.dtype)
    hf = h.float()
    rstd = torch.rsqrt((hf * hf).mean(dim=-1, keepdim=True) + EPS)
    out = (hf * rstd * weight.float()).to(x.dtype)
    return out, h


def make_inputs(dims, dtype, mode, gen):
    M, N = dims["M"], dims["N"]
    x = maybe_outliers(randn((M, N), dtype, gen), mode, gen)
    residual = maybe_outliers(randn((M, N), dtype, gen, std=2.0), mode, gen)
    weight = randn((N,), dtype, gen, std=0.1, mean=1.0)
    return (x, residual, weight)


def flops(dims, dtype):
    # add, square, sum, scale by rstd, *w: 5 per element
    return 5.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    # read x, residual, w; write out and h
    e = elem_size(dtype)
    return 4.0 * dims["M"] * dims["N"] * e + dims["N"] * e
