"""Batched outer product u v^T: the rank-1 state update of SSM / linear-attention decode."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "linalg_batched_outer"
CATEGORY = "linalg"
DESCRIPTION = """
One outer product per batch entry, for u[Z, M] and v[Z, N] (same dtype):
    out[z, i, j] = u[z, i] * v[z, j]
out is [Z, M, N] in the inputs' dtype: the product is formed in fp32 and rounded once (for fp16 /
bf16 inputs the fp32 product is exact, so the result is the correctly rounded product). This is
the rank-1 increment of a recurrent state at decode (Mamba-2: x_t outer B_t per head; Gated
DeltaNet: k_t outer v_t per head). The output is M * N / (M + N) times larger than the inputs:
the time is writing it. "outlier" mode puts rare 10-1000x values in u and v (fp16 products can
overflow to inf; they must be inf where the reference's are).
"""
ENTRY_POINT = "linalg_batched_outer"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "mamba2_2p7b_state_update_decode", "dims": {"Z": 5120, "M": 64, "N": 128}, "weight": 0.35,
     "phase": "decode",
     "source": "Mamba-2 2.7B decode state increment x_t outer B_t: batch 64 x 80 heads, headdim 64, d_state 128"},
    {"name": "qwen3_next_gdn_kv_outer_decode", "dims": {"Z": 8192, "M": 128, "N": 128}, "weight": 0.35,
     "phase": "decode",
     "source": "Qwen3-Next Gated DeltaNet decode k_t outer v_t: batch 256 x 32 value heads, 128 x 128 state"},
    {"name": "mamba2_2p7b_state_update_tail", "dims": {"Z": 1040, "M": 64, "N": 128}, "weight": 0.3,
     "phase": "decode",
     "source": "Mamba-2 2.7B decode state increment, batch 13 x 80 heads (tail batch)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"Z": 4, "M": 16, "N": 32}},
    {"name": "tail", "dims": {"Z": 3, "M": 37, "N": 65}},
]
# One exact fp32 product rounded once: bit-equal to the reference on GPU. The CPU interpreter
# truncates fp32 -> bf16 (up to one bf16 ulp, 2^-7 relative), which the bf16 bound admits.
TOLERANCE = {
    "fp32": {"atol": 1e-6, "rtol": 1e-6},
    "fp16": {"atol": 1e-5, "rtol": 1e-3},
    "bf16": {"atol": 1e-4, "rtol": 8e-3},
}
FORBIDDEN = ("torch.outer", "torch.ger", "torch.einsum", "torch.bmm", "torch.matmul", "torch.mul",
             "torch.Tensor.outer", "torch.Tensor.ger", "torch.kron", "torch.tensordot", "torch.addr")


def linalg_batched_outer(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return (u.float()[:, :, None] * v.float()[:, None, :]).to(u.dtype)


def make_inputs(dims, dtype, mode, gen):
    Z, M, N = dims["Z"], dims["M"], dims["N"]
    u = maybe_outliers(randn((Z, M), dtype, gen), mode, gen)
    v = maybe_outliers(randn((Z, N), dtype, gen), mode, gen)
    return (u, v)


def flops(dims, dtype):
    return 1.0 * dims["Z"] * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    Z, M, N = dims["Z"], dims["M"], dims["N"]
    return Z * (M + N + M * N) * float(elem_size(dtype))
