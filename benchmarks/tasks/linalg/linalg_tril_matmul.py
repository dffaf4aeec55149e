"""Lower-triangular matrix times a matrix: the intra-chunk causal product of Mamba-2 / linear attention."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "linalg_tril_matmul"
CATEGORY = "linalg"
DESCRIPTION = """
Batched product of the lower triangle of a[Z, L, L] (diagonal included) with b[Z, L, N], both
row-major and contiguous, one dtype:
    c[z, i, j] = sum_{k <= i} a[z, i, k] * b[z, k, j]        (c = tril(a) @ b)
c is [Z, L, N] in the inputs' dtype; accumulate in fp32 (IEEE products for fp32, no TF32). The
strict upper triangle of a holds garbage (random values of the same scale) and must be ignored,
not read: a kernel that skips the tiles above the diagonal does half the work, and the FLOP and
byte counts assume it does. This is the intra-chunk step of chunked state-space / linear
attention scans (Mamba-2 SSD: (L o C B^T) X within a chunk). a is N(0, 1/L); "outlier" mode puts
rare 10-1000x values in a and b. bf16 is checked on GPU only.
"""
ENTRY_POINT = "linalg_tril_matmul"
DTYPES = ("fp32", "fp16", "bf16")
PEAK = "matmul"  # tensor-core work: the roofline uses the matmul rate of the dtype
SPARSE_READS = True  # only the lower triangle of a is needed
SHAPES = [
    {"name": "mamba2_2p7b_ssd_chunk_prefill", "dims": {"Z": 2560, "L": 256, "N": 64}, "weight": 0.4,
     "phase": "prefill",
     "source": "Mamba-2 2.7B SSD intra-chunk product: 80 heads x 32 chunks of 256 tokens (8192-token prefill), "
               "headdim 64"},
    {"name": "qwen3_next_gdn_chunk_prefill", "dims": {"Z": 4096, "L": 64, "N": 128}, "weight": 0.4,
     "phase": "prefill",
     "source": "Qwen3-Next Gated DeltaNet chunked form: 32 value heads x 128 chunks of 64 tokens (8192-token "
               "prefill), value head_dim 128"},
    {"name": "mamba2_2p7b_partial_chunk_tail", "dims": {"Z": 80, "L": 200, "N": 64}, "weight": 0.2,
     "phase": "prefill",
     "source": "Mamba-2 2.7B, a 200-token prompt: one partial chunk per head (80 heads, tail size)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"Z": 2, "L": 32, "N": 16}},
    {"name": "tail", "dims": {"Z": 3, "L": 37, "N": 20}},
]
# c is O(1). fp32: order of accumulation ~1e-6; TF32 ~5e-4 (rejected). fp16/bf16: one rounding.
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4},
    "fp16": {"atol": 5e-3, "rtol": 5e-3},
    "bf16": {"atol": 2e-2, "rtol": 2e-2},
}
FORBIDDEN = ("torch.tril", "torch.triu", "torch.Tensor.tril", "torch.Tensor.triu", "torch.tril_indices",
             "torch.triu_indices", "torch.matmul", "torch.bmm", "torch.baddbmm", "torch.einsum", "torch.tensordot",
             "torch.linalg.solve_triangular", "torch.triangular_solve", "torch.Tensor.matmul", "torch._scaled_mm")


def linalg_tril_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.matmul(torch.tril(a), b)


def make_inputs(dims, dtype, mode, gen):
    Z, L, N = dims["Z"], dims["L"], dims["N"]
    a = maybe_outliers(randn((Z, L, L), torch.float32, gen), mode, gen) * L ** -0.5
    b = maybe_outliers(randn((Z, L, N), dtype, gen), mode, gen)
    return (a.to(dtype), b)


def flops(dims, dtype):
    Z, L, N = dims["Z"], dims["L"], dims["N"]
    return 2.0 * Z * N * (L * (L + 1) / 2)


def min_bytes(dims, dtype):
    Z, L, N = dims["Z"], dims["L"], dims["N"]
    # the lower triangle of a, all of b, c written
    return Z * (L * (L + 1) / 2 + 2 * L * N) * float(elem_size(dtype))
