"""x @ W^T with W stored as nn.Linear keeps it ([out_features, in_features]): the serving GEMM."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn
from benchmarks.tolerances import sum_abs_terms

NAME = "linear"
CATEGORY = "matmul"
DESCRIPTION = """
The projection of nn.Linear without bias, with the weight in its stored layout: x[M, K]
row-major activations, w[N, K] row-major weight (row n = output feature n), both contiguous and
of one dtype:
    y[i, n] = sum_k x[i, k] * w[n, k]        (y = x @ w^T)
y is [M, N] in the inputs' dtype. Accumulate in fp32; fp32 means IEEE fp32 products (TF32 is
not allowed and the tolerance rejects it). Do not materialise w^T: read w as stored. w is
N(0, 1/K) so y is O(1); "outlier" mode puts rare 10-1000x values in x and w. bf16 is checked on
GPU only (the CPU interpreter's bf16 tl.dot is wrong).
"""
ENTRY_POINT = "linear"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "llama3_8b_qkv_prefill", "dims": {"M": 8192, "N": 6144, "K": 4096}, "weight": 0.35, "phase": "prefill",
     "source": "Llama-3-8B fused QKV projection (4096 -> 4096 + 2 x 1024), 8192-token prefill; compute-bound"},
    {"name": "llama3_70b_o_proj_prefill", "dims": {"M": 4096, "N": 8192, "K": 8192}, "weight": 0.25,
     "phase": "prefill", "source": "Llama-3-70B attention output projection (8192 -> 8192), 4096-token prefill"},
    {"name": "llama3_8b_o_proj_decode", "dims": {"M": 64, "N": 4096, "K": 4096}, "weight": 0.2, "phase": "decode",
     "source": "Llama-3-8B attention output projection (4096 -> 4096), batch-64 decode; bandwidth-bound on w"},
    {"name": "qwen2_7b_qkv_chunk_tail", "dims": {"M": 1000, "N": 4608, "K": 3584}, "weight": 0.2,
     "phase": "prefill",
     "source": "Qwen2-7B fused QKV projection (3584 -> 3584 + 2 x 512), 1000-token prefill chunk (tail size)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"M": 32, "N": 48, "K": 40}},
    {"name": "tail", "dims": {"M": 33, "N": 17, "K": 50}},
]
# y is O(1). fp32: accumulation order moves results by ~1e-6, TF32 by ~5e-4 (rejected).
# fp16/bf16: one rounding of the fp32 accumulator (2^-11 / 2^-8 relative), order may differ.
# "terms": each output sums K products; outlier inputs make small outputs out of large terms, and
# fp32 accumulation in another order than cuBLAS's differs by about sqrt(K) * eps32 * sum |terms|
# (2^-16 for K up to 65536); error_terms gives sum_k |a_k| |b_k|.
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4, "terms": 2**-16},
    "fp16": {"atol": 5e-3, "rtol": 5e-3, "terms": 2**-16},
    "bf16": {"atol": 2e-2, "rtol": 2e-2, "terms": 2**-16},
}
FORBIDDEN = ("torch.matmul", "torch.mm", "torch.bmm", "torch.addmm", "torch.einsum", "torch.tensordot",
             "torch.inner", "torch.nn.functional.linear", "torch.Tensor.matmul", "torch.Tensor.mm",
             "torch._scaled_mm")


def linear(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.linear(x, w)


def error_terms(x, w):
    """sum_k |a_k| |b_k| per output element (see TOLERANCE)."""
    return sum_abs_terms(linear, (x, w))


def make_inputs(dims, dtype, mode, gen):
    M, N, K = dims["M"], dims["N"], dims["K"]
    x = maybe_outliers(randn((M, K), dtype, gen), mode, gen)
    w = maybe_outliers(randn((N, K), torch.float32, gen), mode, gen) * K ** -0.5
    return (x, w.to(dtype))


def flops(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * dims["K"]


def min_bytes(dims, dtype):
    M, N, K = dims["M"], dims["N"], dims["K"]
    return (M * K + N * K + M * N) * float(elem_size(dtype))
