"""Gram matrix X^T X: the GPTQ Hessian and the Muon Newton-Schulz step."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn
from benchmarks.tolerances import sum_abs_terms

NAME = "linalg_gram"
CATEGORY = "linalg"
DESCRIPTION = """
The Gram matrix of the columns of a row-major x[T, D] (T samples of D features):
    g[i, j] = sum_t x[t, i] * x[t, j]        (g = x^T x)
g is [D, D] in x's dtype, accumulate in fp32 (IEEE products for fp32, no TF32). g is symmetric: a
kernel may compute the tiles on and above the diagonal only and mirror them, and the FLOP count
assumes it does (T * D * (D + 1) multiply-adds x 1, i.e. the unique entries). Real uses: the
GPTQ/OBS Hessian H = X^T X accumulated over calibration tokens, and A = X X^T in Muon's
Newton-Schulz orthogonalisation. x is N(0, 1/T) so g is O(1) on the diagonal; "outlier" mode puts
rare 10-1000x values in x. bf16 is checked on GPU only.
"""
ENTRY_POINT = "linalg_gram"
DTYPES = ("fp32", "fp16", "bf16")
PEAK = "matmul"  # tensor-core work: the roofline uses the matmul rate of the dtype
SHAPES = [
    {"name": "llama3_8b_gptq_hessian", "dims": {"T": 16384, "D": 4096}, "weight": 0.35, "phase": "prefill",
     "source": "GPTQ Hessian of a Llama-3-8B attention input (hidden 4096) over a 16384-token calibration chunk"},
    {"name": "llama3_8b_muon_gram_up", "dims": {"T": 14336, "D": 4096}, "weight": 0.35, "phase": "prefill",
     "source": "Muon Newton-Schulz A = X X^T for the Llama-3-8B MLP up weight (4096 x 14336)"},
    {"name": "qwen2_7b_gptq_hessian_tail", "dims": {"T": 1000, "D": 3584}, "weight": 0.3, "phase": "prefill",
     "source": "GPTQ Hessian of a Qwen2-7B layer input (hidden 3584) over a 1000-token batch (tail size)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"T": 48, "D": 32}},
    {"name": "tail", "dims": {"T": 50, "D": 70}},
]
# Diagonal entries ~1, off-diagonal ~T^-0.5. fp32: accumulation order ~1e-6, TF32 ~5e-4
# (rejected). fp16/bf16: one rounding of the fp32 sum (2^-11 / 2^-8 relative).
# "terms": each entry sums T products; outlier rows make small entries out of large terms, and
# fp32 accumulation in another order than cuBLAS's differs by about sqrt(T) * eps32 * sum |terms|
# (2^-16 for T up to 65536); error_terms gives sum_t |x_ti| |x_tj|.
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4, "terms": 2**-16},
    "fp16": {"atol": 2e-3, "rtol": 5e-3, "terms": 2**-16},
    "bf16": {"atol": 1e-2, "rtol": 2e-2, "terms": 2**-16},
}
FORBIDDEN = ("torch.matmul", "torch.mm", "torch.bmm", "torch.addmm", "torch.einsum", "torch.tensordot",
             "torch.inner", "torch.cov", "torch.corrcoef", "torch.nn.functional.linear", "torch.Tensor.matmul",
             "torch.Tensor.mm", "torch._scaled_mm")


def linalg_gram(x: torch.Tensor) -> torch.Tensor:
    return torch.matmul(x.t(), x)


def error_terms(x):
    """sum_t |x_ti| |x_tj| per output element (see TOLERANCE)."""
    return sum_abs_terms(linalg_gram, (x,))


def make_inputs(dims, dtype, mode, gen):
    T, D = dims["T"], dims["D"]
    x = maybe_outliers(randn((T, D), torch.float32, gen), mode, gen) * T ** -0.5
    return (x.to(dtype),)


def flops(dims, dtype):
    T, D = dims["T"], dims["D"]
    return 1.0 * T * D * (D + 1)  # 2 * T per unique entry, D (D + 1) / 2 unique entries


def min_bytes(dims, dtype):
    T, D = dims["T"], dims["D"]
    return (T * D + D * D) * float(elem_size(dtype))
