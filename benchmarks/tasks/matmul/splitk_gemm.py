"""GEMM with a small output and a long reduction (router logits, MLA down-projection, LoRA grads)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn
from benchmarks.tolerances import sum_abs_terms

NAME = "splitk_gemm"
CATEGORY = "matmul"
DESCRIPTION = """
Matrix product of row-major a[M, K] and b[K, N] (contiguous, one dtype) where M * N is small and
K is long:
    c[i, j] = sum_k a[i, k] * b[k, j]
c is [M, N] in the inputs' dtype. Accumulate in fp32 (IEEE fp32 products for fp32; TF32 is not
allowed). The output has too few tiles to occupy an H200 (e.g. 32 x 256), so a fast kernel splits
K across programs; the judge checks that two calls give bit-identical results, so the partial
sums must be combined in a fixed order (no fp32 atomics). b is scaled by 1/sqrt(K) so c is O(1);
"outlier" mode puts rare 10-1000x values in a and b. bf16 is checked on GPU only (the CPU
interpreter's bf16 tl.dot is wrong).
"""
ENTRY_POINT = "splitk_gemm"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "deepseek_v3_router_decode", "dims": {"M": 32, "N": 256, "K": 7168}, "weight": 0.3, "phase": "decode",
     "source": "DeepSeek-V3 MoE router logits (hidden 7168 -> 256 routed experts), batch-32 decode; gate "
               "weight kept transposed [7168, 256]"},
    {"name": "deepseek_v3_kv_a_decode", "dims": {"M": 16, "N": 576, "K": 7168}, "weight": 0.3, "phase": "decode",
     "source": "DeepSeek-V3 MLA kv_a_proj_with_mqa (7168 -> 512 + 64), batch-16 decode; weight stored [K, N]"},
    {"name": "llama3_8b_lora_b_grad", "dims": {"M": 16, "N": 4096, "K": 65536}, "weight": 0.25, "phase": "prefill",
     "source": "Llama-3-8B LoRA rank-16 fine-tuning, grad of B for q_proj (4096 out): h^T [16, tokens] @ dY "
               "[tokens, 4096] over 65536 tokens"},
    {"name": "qwen2_7b_lora_b_grad_tail", "dims": {"M": 8, "N": 3584, "K": 40000}, "weight": 0.15,
     "phase": "prefill",
     "source": "Qwen2-7B LoRA rank-8 fine-tuning, grad of B for o_proj (3584 out) over 40000 tokens (tail size)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"M": 16, "N": 32, "K": 1024}},
    {"name": "tail", "dims": {"M": 5, "N": 24, "K": 1300}},
]
# c is O(1). fp32: accumulation order (split-K included) moves results by ~1e-6 even at K = 65536;
# TF32 by ~5e-4 (rejected). fp16/bf16: one rounding of the fp32 sum (2^-11 / 2^-8 relative).
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


def splitk_gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.matmul(a, b)


def error_terms(a, b):
    """sum_k |a_k| |b_k| per output element (see TOLERANCE)."""
    return sum_abs_terms(splitk_gemm, (a, b))


def make_inputs(dims, dtype, mode, gen):
    M, N, K = dims["M"], dims["N"], dims["K"]
    a = maybe_outliers(randn((M, K), dtype, gen), mode, gen)
    b = maybe_outliers(randn((K, N), torch.float32, gen), mode, gen) * K ** -0.5
    return (a, b.to(dtype))


def flops(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * dims["K"]


def min_bytes(dims, dtype):
    M, N, K = dims["M"], dims["N"], dims["K"]
    return (M * K + K * N + M * N) * float(elem_size(dtype))
