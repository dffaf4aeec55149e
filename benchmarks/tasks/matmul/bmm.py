"""Batched GEMM: one independent matrix product per batch entry (per attention head, per MLA head)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn
from benchmarks.tolerances import sum_abs_terms

NAME = "bmm"
CATEGORY = "matmul"
DESCRIPTION = """
Batched matrix product of row-major a[BATCH, M, K] and b[BATCH, K, N] (contiguous, same dtype):
    c[z, i, j] = sum_k a[z, i, k] * b[z, k, j]
c is [BATCH, M, N] in the inputs' dtype. Accumulate in fp32. fp32 means IEEE fp32 products: TF32
tensor-core math is not allowed, and the tolerance rejects it. b is scaled by 1/sqrt(K) so c is
O(1); "outlier" mode puts rare 10-1000x values in a and b. Every batch entry has its own b (no
broadcasting). On the CPU (Triton interpreter) bf16 tl.dot is computed wrongly, so bf16 is
checked on GPU only.
"""
ENTRY_POINT = "bmm"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "llama3_8b_attn_scores_prefill", "dims": {"BATCH": 32, "M": 2048, "N": 2048, "K": 128}, "weight": 0.3,
     "phase": "prefill",
     "source": "Llama-3-8B unfused attention scores Q K^T (32 heads, head_dim 128), 2048-token prefill"},
    {"name": "llama3_8b_attn_pv_prefill", "dims": {"BATCH": 32, "M": 2048, "N": 128, "K": 2048}, "weight": 0.3,
     "phase": "prefill",
     "source": "Llama-3-8B unfused attention P V (32 heads, head_dim 128), 2048-token prefill"},
    {"name": "deepseek_v3_mla_absorb_decode", "dims": {"BATCH": 128, "M": 32, "N": 512, "K": 128}, "weight": 0.25,
     "phase": "decode",
     "source": "DeepSeek-V3 MLA weight absorption q_nope x W_UK per head (128 heads, 128 -> kv_lora_rank 512), "
               "batch-32 decode"},
    {"name": "deepseek_v3_mla_uv_decode_tail", "dims": {"BATCH": 128, "M": 13, "N": 128, "K": 512}, "weight": 0.15,
     "phase": "decode",
     "source": "DeepSeek-V3 MLA latent attention output x W_UV per head (512 -> v_head_dim 128), batch 13 decode "
               "(tail size)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"BATCH": 2, "M": 32, "N": 32, "K": 24}},
    {"name": "tail", "dims": {"BATCH": 3, "M": 19, "N": 17, "K": 40}},
]
# c is O(1). fp32: reduction order changes results by ~1e-6; TF32 inputs (unit roundoff 2^-11)
# leave ~5e-4, which these bounds reject. fp16/bf16: one rounding of the output (2^-11 / 2^-8
# relative) after an fp32 accumulation whose order may differ.
# "terms": each output sums K products; outlier inputs make small outputs out of large terms, and
# fp32 accumulation in another order than cuBLAS's differs by about sqrt(K) * eps32 * sum |terms|
# (2^-16 for K up to 65536); error_terms gives sum_k |a_k| |b_k|.
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4, "terms": 2**-16},
    "fp16": {"atol": 5e-3, "rtol": 5e-3, "terms": 2**-16},
    "bf16": {"atol": 2e-2, "rtol": 2e-2, "terms": 2**-16},
}
FORBIDDEN = ("torch.matmul", "torch.mm", "torch.bmm", "torch.baddbmm", "torch.addbmm", "torch.einsum",
             "torch.tensordot", "torch.Tensor.matmul", "torch.Tensor.bmm", "torch.nn.functional.linear",
             "torch._scaled_mm")


def bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.bmm(a, b)


def error_terms(a, b):
    """sum_k |a_k| |b_k| per output element (see TOLERANCE)."""
    return sum_abs_terms(bmm, (a, b))


def make_inputs(dims, dtype, mode, gen):
    Z, M, N, K = dims["BATCH"], dims["M"], dims["N"], dims["K"]
    a = maybe_outliers(randn((Z, M, K), dtype, gen), mode, gen)
    b = maybe_outliers(randn((Z, K, N), torch.float32, gen), mode, gen) * K ** -0.5
    return (a, b.to(dtype))


def flops(dims, dtype):
    return 2.0 * dims["BATCH"] * dims["M"] * dims["N"] * dims["K"]


def min_bytes(dims, dtype):
    Z, M, N, K = dims["BATCH"], dims["M"], dims["N"], dims["K"]
    return Z * (M * K + K * N + M * N) * float(elem_size(dtype))
