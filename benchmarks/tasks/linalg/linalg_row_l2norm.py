"""Euclidean norm of every row: q/k L2-normalisation in linear attention, embedding normalisation."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "linalg_row_l2norm"
CATEGORY = "linalg"
DESCRIPTION = """
The L2 (Euclidean) norm of each row of x[M, N]:
    out[i] = sqrt(sum_j x[i, j]^2)
out is [M] in x's dtype. Square and sum in fp32 and round once. "outlier" mode puts rare values up
to 1000x in x: their squares overflow fp16 (max 65504) if the sum is kept in half precision, and
an fp32 sum of squares stays exact enough (no rescaling trick is needed at these magnitudes).
"""
ENTRY_POINT = "linalg_row_l2norm"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "qwen3_next_qk_l2norm_prefill", "dims": {"M": 131072, "N": 128}, "weight": 0.35, "phase": "prefill",
     "source": "Qwen3-Next Gated DeltaNet q/k L2 norm (16 key heads x head_dim 128), 8192-token prefill"},
    {"name": "qwen3_next_qk_l2norm_decode", "dims": {"M": 1024, "N": 128}, "weight": 0.2, "phase": "decode",
     "source": "Qwen3-Next Gated DeltaNet q/k L2 norm (16 key heads x 128), batch-64 decode"},
    {"name": "e5_mistral_embedding_norm", "dims": {"M": 4096, "N": 4096}, "weight": 0.25, "phase": "prefill",
     "source": "E5-Mistral-7B sentence embeddings (hidden 4096), norms of a 4096-passage batch"},
    {"name": "qwen2_7b_hidden_norm_tail", "dims": {"M": 1000, "N": 3584}, "weight": 0.2, "phase": "prefill",
     "source": "Qwen2-7B hidden states (3584) of a 1000-token chunk (tail size), e.g. embedding-model pooling"},
]
CPU_SHAPES = [
    {"name": "heads", "dims": {"M": 40, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# An fp32 sum of squares in a different order moves the norm by ~1e-7 relative; one rounding
# to fp16 / bf16 (2^-11 / 2^-8 relative; the CPU interpreter truncates bf16, up to 2^-7).
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-3, "rtol": 2e-3},
    "bf16": {"atol": 1e-2, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.norm", "torch.linalg.norm", "torch.linalg.vector_norm", "torch.nn.functional.normalize",
             "torch.Tensor.norm", "torch.frobenius_norm", "torch.nuclear_norm", "torch.renorm")


def linalg_row_l2norm(x: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    return torch.sqrt((xf * xf).sum(dim=1)).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["M"], dims["N"]), dtype, gen)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # square and add per element, one sqrt per row
    return 2.0 * dims["M"] * dims["N"] + dims["M"]


def min_bytes(dims, dtype):
    M, N = dims["M"], dims["N"]
    return (M * N + M) * float(elem_size(dtype))
