"""Dense GEMM C = A @ B, the projections of every transformer layer."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn
from benchmarks.tolerances import sum_abs_terms

NAME = "matmul"
CATEGORY = "matmul"
DESCRIPTION = """
Dense matrix product of row-major A[M, K] and B[K, N] (both contiguous, same dtype):
    C[i, j] = sum_k A[i, k] * B[k, j]
C is [M, N] in the inputs' dtype. Accumulate in fp32. fp32 means IEEE fp32 products: TF32
tensor-core math (10-bit mantissa) is not allowed, and the tolerance rejects it. B is scaled by
1/sqrt(K) so C is O(1); "outlier" mode puts rare 10-1000x values in A (the activations).
On the CPU (Triton interpreter) bf16 tl.dot is computed wrongly, so bf16 is checked on GPU only.
"""
ENTRY_POINT = "matmul"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {
        "name": "llama3_8b_up_prefill",
        "dims": {"M": 8192, "N": 14336, "K": 4096},
        "weight": 0.4,
        "phase": "prefill",
        "source": "Llama-3-8B MLP up/gate projection (4096 -> 14336), 8192-token prefill; compute-bound",
    },
    {
        "name": "llama3_8b_up_decode",
        "dims": {"M": 32, "N": 14336, "K": 4096},
        "weight": 0.2,
        "phase": "decode",
        "source": "Llama-3-8B MLP up/gate projection, batch-32 decode; bandwidth-bound on B",
    },
    {
        "name": "llama3_70b_down_prefill",
        "dims": {"M": 4096, "N": 8192, "K": 28672},
        "weight": 0.2,
        "phase": "prefill",
        "source": "Llama-3-70B MLP down projection (28672 -> 8192), 4096-token prefill",
    },
    {
        "name": "qwen2_7b_down_decode_tail",
        "dims": {"M": 13, "N": 3584, "K": 18944},
        "weight": 0.2,
        "phase": "decode",
        "source": "Qwen2-7B MLP down projection (18944 -> 3584), batch 13 decode (tail size)",
    },
]
CPU_SHAPES = [
    {"name": "small", "dims": {"M": 64, "N": 48, "K": 40}},
    {"name": "tail", "dims": {"M": 33, "N": 17, "K": 50}},
]
# C is O(1) (up to ~200 in outlier rows). fp32: a legitimate change of accumulation order moves C
# by up to ~6e-6 * sum_k |a_ik b_kj| (measured on an H200 (torch 2.11, triton 3.6, 2026-11-29): Triton ieee tiles vs cuBLAS, 1.2e-3 at
# K = 28672 with outliers), while TF32 inputs (unit roundoff 2^-11) leave errors of std ~4e-4 on
# O(1) outputs: atol 1.5e-3 admits the first and still fails TF32 on ~1e-4 of the elements of
# every shape with 1e5+ outputs. fp16/bf16: the output rounds once (2^-11 / 2^-8 relative) after
# an fp32 accumulation whose order may differ (split-K, tile shapes).
# "terms": each output sums K products; outlier inputs make small outputs out of large terms, and
# fp32 accumulation in another order than cuBLAS's differs by about sqrt(K) * eps32 * sum |terms|
# (2^-16 for K up to 65536); error_terms gives sum_k |a_k| |b_k|.
TOLERANCE = {
    "fp32": {"atol": 1.5e-3, "rtol": 1e-4, "terms": 2**-16},
    "fp16": {"atol": 5e-3, "rtol": 5e-3, "terms": 2**-16},
    "bf16": {"atol": 2e-2, "rtol": 2e-2, "terms": 2**-16},
}
FORBIDDEN = (
    "torch.matmul",
    "torch.mm",
    "torch.bmm",
    "torch.addmm",
    "torch.baddbmm",
    "torch.einsum",
    "torch.tensordot",
    "torch.inner",
    "torch.nn.functional.linear",
    "torch.Tensor.matmul",
    "torch.Tensor.mm",
    "torch._scaled_mm",
)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.matmul(a, b)


def error_terms(a, b):
    """sum_k |a_k| |b_k| per output element (see TOLERANCE)."""
    return sum_abs_terms(matmul, (a, b))


def make_inputs(dims, dtype, mode, gen):
    M, N, K = dims["M"], dims["N"], dims["K"]
    # outliers go in A only: A plays the activations (which carry 10-1000x outlier channels), B the
    # weights (which do not). An outlier in both at the same k makes a single 1e4 product, and the
    # legitimate fp32 rounding of the sum around it would swamp any tolerance that rejects TF32.
    a = maybe_outliers(randn((M, K), dtype, gen), mode, gen)
    b = randn((K, N), dtype, gen, std=K**-0.5)
    return (a, b)


def flops(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * dims["K"]


def min_bytes(dims, dtype):
    M, N, K = dims["M"], dims["N"], dims["K"]
    return (M * K + K * N + M * N) * float(elem_size(dtype))
