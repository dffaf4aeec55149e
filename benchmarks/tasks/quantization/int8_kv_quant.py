"""int8 KV-cache quantization of new keys/values: one symmetric scale per token and KV head."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "int8_kv_quant"
CATEGORY = "quantization"
DESCRIPTION = """
Quantize the keys and values a forward pass produces, before they are written to an int8 KV
cache (per-token, per-head scales, as in LMDeploy / TensorRT-LLM int8 KV caches). k, v are
[T, HKV, D] (T new tokens, HKV KV heads, head_dim D), same dtype. For each t, h, and each of k
and v separately, in fp32:
    s[t, h]    = max(max_d |k[t, h, d]|, 1e-10) / 127
    q[t, h, d] = clamp(round_half_even(k[t, h, d] / s[t, h]), -128, 127)
Returns (k_q, k_s, v_q, v_s): k_q, v_q [T, HKV, D] int8; k_s, v_s [T, HKV] fp32. IEEE fp32
division and ties-to-even rounding, so a faithful kernel is bit-exact. Library quantization calls
are forbidden. "outlier" mode puts rare 10-1000x values in k and v; "zero_tokens" zeroes every
fifth token (padding slots: s = 1e-10 / 127, q = 0); "ties" mode gives every (token, head) row an
abs-max of exactly 127 (s = 1) with all values multiples of 0.5 (half of them exact ties).
"""
ENTRY_POINT = "int8_kv_quant"
DTYPES = ("fp32", "fp16", "bf16")
MODES = ("zero_tokens", "ties")
SHAPES = [
    {"name": "llama3_8b_prefill", "dims": {"T": 8192, "HKV": 8, "D": 128}, "weight": 0.35, "phase": "prefill",
     "source": "Llama-3-8B new K/V (8 KV heads x head_dim 128) of an 8192-token prefill"},
    {"name": "llama3_70b_tp8_prefill", "dims": {"T": 16384, "HKV": 1, "D": 128}, "weight": 0.25, "phase": "prefill",
     "source": "Llama-3-70B at tensor-parallel 8 (1 KV head per GPU), 16384-token prefill"},
    {"name": "llama3_8b_decode", "dims": {"T": 64, "HKV": 8, "D": 128}, "weight": 0.2, "phase": "decode",
     "source": "Llama-3-8B new K/V of a batch-64 decode step"},
    {"name": "qwen2_7b_decode_tail", "dims": {"T": 13, "HKV": 4, "D": 128}, "weight": 0.2, "phase": "decode",
     "source": "Qwen2-7B new K/V (4 KV heads x 128) of a batch-13 decode step (tail)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"T": 10, "HKV": 2, "D": 32}},
    {"name": "tail", "dims": {"T": 7, "HKV": 3, "D": 64}},
]
TOLERANCE = {
    "cosine": 0.99999,
    "rel_l1": 5e-4,
    "rmse": 0.2,
    "why": (
        "All four outputs are compared as numbers (q in int8 steps, s in fp32). A kernel that follows "
        "the contract is bit-exact. A correct kernel may differ in the last bit of k / s (multiplying "
        "by 127 / amax, or Triton's approximate divide) and flip q by one step where k / s sits within "
        "an ulp of a .5 boundary. Measured for that variant over the CPU shapes and the GPU shapes' "
        "rows, all modes, 3 seeds: rel_l1 <= 7.7e-5, cosine >= 0.9999994, rmse <= 0.056 (rmse is per "
        "element: two flips in a 640-element CPU tensor). Rejected, as measured: truncation (rel_l1 "
        "0.015, rmse 0.71), a scale of amax / 128 (rel_l1 0.01, rmse 0.58), one scale per token "
        "across all heads (rel_l1 5.4), ties away from zero in 'ties' mode (rel_l1 8e-3, rmse 0.51)."
    ),
}
FORBIDDEN = ("torch.quantize_per_tensor", "torch.quantize_per_channel", "torch.quantize_per_tensor_dynamic",
             "torch.ao", "torch.quantization", "torch.fake_quantize_per_tensor_affine",
             "torch.fake_quantize_per_channel_affine")


def _quant_heads(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    xf = x.float()
    s = torch.clamp_min(xf.abs().amax(dim=2, keepdim=True), 1e-10) / 127.0
    q = torch.clamp(torch.round(xf / s), -128.0, 127.0).to(torch.int8)  # torch.round: ties to even
    return q, s[:, :, 0]


def int8_kv_quant(k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    k_q, k_s = _quant_heads(k)
    v_q, v_s = _quant_heads(v)
    return k_q, k_s, v_q, v_s


def _ties(T: int, HKV: int, D: int, dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    x = torch.clamp(torch.round(randn((T * HKV, D), torch.float32, gen, std=40.0) * 2) / 2, -126.5, 126.5)
    col = torch.randint(0, D, (T * HKV,), generator=gen, device=gen.device)
    sign = torch.where(torch.rand((T * HKV,), generator=gen, device=gen.device) < 0.5, -1.0, 1.0)
    x[torch.arange(T * HKV, device=gen.device), col] = 127.0 * sign
    return x.reshape(T, HKV, D).to(dtype)


def make_inputs(dims, dtype, mode, gen):
    T, HKV, D = dims["T"], dims["HKV"], dims["D"]
    if mode == "ties":
        return (_ties(T, HKV, D, dtype, gen), _ties(T, HKV, D, dtype, gen))
    k = maybe_outliers(randn((T, HKV, D), dtype, gen), mode, gen)
    v = maybe_outliers(randn((T, HKV, D), dtype, gen), mode, gen)
    if mode == "zero_tokens":
        k[::5] = 0
        v[::5] = 0
    return (k, v)


def flops(dims, dtype):
    return 2 * 4.0 * dims["T"] * dims["HKV"] * dims["D"]


def min_bytes(dims, dtype):
    T, HKV, D = dims["T"], dims["HKV"], dims["D"]
    # k and v read; two int8 tensors and two scale tensors written
    return 2 * (T * HKV * D * float(elem_size(dtype)) + T * HKV * D + 4.0 * T * HKV)
