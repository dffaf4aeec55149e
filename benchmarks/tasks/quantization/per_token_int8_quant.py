"""Dynamic per-token symmetric int8 quantization of activations (SmoothQuant / vLLM scaled_int8_quant)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "per_token_int8_quant"
CATEGORY = "quantization"
DESCRIPTION = """
Quantize each row (token) of x[M, K] to int8 with its own scale, computed on the fly. In fp32:
    s[i]    = max(max_k |x[i, k]|, 1e-10) / 127
    q[i, k] = clamp(round_half_even(x[i, k] / s[i]), -128, 127)
Returns (q, s): q is [M, K] int8, s is [M, 1] fp32. The division is an IEEE fp32 division (not a
multiply by a reciprocal, not an approximate divide) and the rounding is to nearest, ties to even
(torch.round / rint), so a faithful kernel reproduces q exactly. Quantization library calls
(torch.quantize_per_*, torch.ao) are forbidden: scales, rounding, clamping and the cast are the
task. "outlier" mode puts rare 10-1000x values in x: they set s for their row and crush the row's
ordinary values towards zero. "zero_rows" mode zeroes every fifth row: s must fall back to
1e-10 / 127 and q to 0 (no 0 / 0). "ties" mode makes every row's abs-max exactly 127 (so s = 1)
and every value a multiple of 0.5: half the values are exact .5 ties, which only round-half-even
gets right.
"""
ENTRY_POINT = "per_token_int8_quant"
DTYPES = ("fp32", "fp16", "bf16")
MODES = ("zero_rows", "ties")
SHAPES = [
    {"name": "llama3_8b_qkv_in_prefill", "dims": {"M": 8192, "K": 4096}, "weight": 0.3, "phase": "prefill",
     "source": "Llama-3-8B W8A8 serving: activations entering the QKV / gate-up projections (hidden 4096), "
               "8192-token prefill"},
    {"name": "llama3_8b_down_in_prefill", "dims": {"M": 8192, "K": 14336}, "weight": 0.3, "phase": "prefill",
     "source": "Llama-3-8B W8A8: activations entering the down projection (intermediate 14336), 8192-token prefill"},
    {"name": "llama3_70b_decode", "dims": {"M": 32, "K": 8192}, "weight": 0.2, "phase": "decode",
     "source": "Llama-3-70B W8A8: activations entering the QKV projection (hidden 8192), batch-32 decode"},
    {"name": "qwen2_7b_down_in_tail", "dims": {"M": 13, "K": 18944}, "weight": 0.2, "phase": "decode",
     "source": "Qwen2-7B W8A8: activations entering the down projection (intermediate 18944), batch 13 (tail)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"M": 10, "K": 256}},
    {"name": "tail", "dims": {"M": 7, "K": 1000}},
]
TOLERANCE = {
    "cosine": 0.99999,
    "rel_l1": 5e-4,
    "rmse": 0.1,
    "why": (
        "Both outputs are compared as numbers: q in int8 steps (|q| ~ 25 on average, ~0-2 in rows an "
        "outlier dominates), s in fp32. A kernel that follows the contract (IEEE division, ties to "
        "even) is bit-exact. A correct kernel may still differ in the last bit of x / s: multiplying "
        "by 127 / amax (as vLLM's kernel does) or Triton's approximate divide flips q by one step where "
        "x / s sits within an ulp of a .5 boundary. Measured for the reciprocal variant over the CPU "
        "shapes and GPU-width rows (K up to 18944), all modes, 3 seeds: rel_l1 <= 4.4e-5, cosine >= "
        "0.9999995, rmse <= 0.034 (rmse is per element, so a few flips in a 2560-element CPU shape "
        "weigh most). The bounds reject what we measured wrong: truncating instead of rounding (rel_l1 "
        "0.22, rmse 0.71), scales of amax / 128 or amax / 127.5 (rel_l1 >= 8e-3, rmse >= 0.5), and "
        "rounding ties away from zero, which the 'ties' mode exposes (rel_l1 8e-3, rmse 0.51 there)."
    ),
}
FORBIDDEN = ("torch.quantize_per_tensor", "torch.quantize_per_channel", "torch.quantize_per_tensor_dynamic",
             "torch.ao", "torch.quantization", "torch.fake_quantize_per_tensor_affine",
             "torch.fake_quantize_per_channel_affine", "torch._make_per_tensor_quantized_tensor")


def per_token_int8_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    xf = x.float()
    amax = xf.abs().amax(dim=1, keepdim=True)
    s = torch.clamp_min(amax, 1e-10) / 127.0
    q = torch.clamp(torch.round(xf / s), -128.0, 127.0).to(torch.int8)  # torch.round: ties to even
    return q, s


def ties_rows(M: int, K: int, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    """Rows of multiples of 0.5 in [-126.5, 126.5] with one +-127 per row: s = 1, many exact ties
    (all exactly representable in fp16 and bf16)."""
    x = torch.clamp(torch.round(randn((M, K), torch.float32, gen, std=40.0) * 2) / 2, -126.5, 126.5)
    col = torch.randint(0, K, (M,), generator=gen, device=gen.device)
    sign = torch.where(torch.rand((M,), generator=gen, device=gen.device) < 0.5, -1.0, 1.0)
    x[torch.arange(M, device=gen.device), col] = 127.0 * sign
    return x.to(dtype)


def make_inputs(dims, dtype, mode, gen):
    M, K = dims["M"], dims["K"]
    if mode == "ties":
        return (ties_rows(M, K, dtype, gen),)
    x = maybe_outliers(randn((M, K), dtype, gen), mode, gen)
    if mode == "zero_rows":
        x[::5] = 0
    return (x,)


def flops(dims, dtype):
    # abs-max, divide, round, clamp per element
    return 4.0 * dims["M"] * dims["K"]


def min_bytes(dims, dtype):
    M, K = dims["M"], dims["K"]
    # x read; q (int8) and s (fp32) written
    return M * K * float(elem_size(dtype)) + M * K + 4.0 * M
