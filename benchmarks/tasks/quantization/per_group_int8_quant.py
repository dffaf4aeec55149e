"""Dynamic per-token-group int8 quantization (groups of 128 channels), as vLLM's per_token_group_quant_int8."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "per_group_int8_quant"
CATEGORY = "quantization"
DESCRIPTION = """
Quantize x[M, K] to int8 with one scale per token and per group of 128 consecutive channels
(K is a multiple of 128; group g of row i is x[i, 128 g : 128 (g + 1)]). In fp32:
    s[i, g]  = max(max_{k in g} |x[i, k]|, 1e-10) / 127
    q[i, k]  = clamp(round_half_even(x[i, k] / s[i, k // 128]), -128, 127)
Returns (q, s): q is [M, K] int8, s is [M, K / 128] fp32 (row-major). IEEE fp32 division and
ties-to-even rounding, so a faithful kernel is bit-exact. Quantization library calls are
forbidden. "outlier" mode puts rare 10-1000x values in x (only their own group is crushed);
"zero_groups" mode zeroes every fifth group of every row (s falls back to 1e-10 / 127, q to 0);
"ties" mode makes every group's abs-max exactly 127 (s = 1) with all values multiples of 0.5,
so half the values are exact ties.
"""
ENTRY_POINT = "per_group_int8_quant"
DTYPES = ("fp32", "fp16", "bf16")
MODES = ("zero_groups", "ties")
GROUP = 128
SHAPES = [
    {"name": "llama3_8b_qkv_in_prefill", "dims": {"M": 8192, "K": 4096}, "weight": 0.3, "phase": "prefill",
     "source": "Llama-3-8B block-quantized int8 serving: activations entering QKV / gate-up (hidden 4096), "
               "8192-token prefill"},
    {"name": "llama3_8b_down_in_prefill", "dims": {"M": 8192, "K": 14336}, "weight": 0.3, "phase": "prefill",
     "source": "Llama-3-8B: activations entering the down projection (intermediate 14336 = 112 groups), "
               "8192-token prefill"},
    {"name": "deepseek_v3_decode", "dims": {"M": 32, "K": 7168}, "weight": 0.2, "phase": "decode",
     "source": "DeepSeek-V3 hidden 7168 (56 groups) entering an attention / MoE projection, batch-32 decode"},
    {"name": "qwen2_7b_down_in_tail", "dims": {"M": 13, "K": 18944}, "weight": 0.2, "phase": "decode",
     "source": "Qwen2-7B activations entering the down projection (18944 = 148 groups), batch 13 (tail)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"M": 10, "K": 256}},
    {"name": "tail", "dims": {"M": 7, "K": 640}},
]
TOLERANCE = {
    "cosine": 0.99999,
    "rel_l1": 5e-4,
    "rmse": 0.1,
    "why": (
        "Both outputs are compared as numbers (q in int8 steps, s in fp32). A kernel that follows the "
        "contract is bit-exact; a correct kernel may still differ in the last bit of x / s (multiplying "
        "by 127 / amax, or Triton's approximate divide) and then flips q by one step where x / s sits "
        "within an ulp of a .5 boundary. Measured for the reciprocal variant over the CPU shapes and "
        "GPU-width rows, all modes, 3 seeds: rel_l1 <= 4.5e-5, cosine >= 0.9999996, rmse <= 0.028 (a "
        "few flips weigh most in the small CPU shapes). Rejected, as measured: truncation (rel_l1 "
        ">= 0.015, rmse 0.71), scales of amax / 128 or amax / 127.5 (rel_l1 >= 8e-3, rmse >= 0.5), one "
        "scale per row instead of per group (rel_l1 up to 22 on the scales), and ties rounded away from "
        "zero, which the 'ties' mode exposes (rel_l1 8e-3, rmse 0.51)."
    ),
}
FORBIDDEN = ("torch.quantize_per_tensor", "torch.quantize_per_channel", "torch.quantize_per_tensor_dynamic",
             "torch.ao", "torch.quantization", "torch.fake_quantize_per_tensor_affine",
             "torch.fake_quantize_per_channel_affine", "torch._make_per_tensor_quantized_tensor")


def per_group_int8_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    M, K = x.shape
    xg = x.float().reshape(M, K // GROUP, GROUP)
    s = torch.clamp_min(xg.abs().amax(dim=2, keepdim=True), 1e-10) / 127.0
    q = torch.clamp(torch.round(xg / s), -128.0, 127.0).to(torch.int8)  # torch.round: ties to even
    return q.reshape(M, K), s.reshape(M, K // GROUP)


def make_inputs(dims, dtype, mode, gen):
    M, K = dims["M"], dims["K"]
    assert K % GROUP == 0
    if mode == "ties":
        # multiples of 0.5 in [-126.5, 126.5], one +-127 per group: s = 1, many exact .5 ties
        x = torch.clamp(torch.round(randn((M, K), torch.float32, gen, std=40.0) * 2) / 2, -126.5, 126.5)
        G = M * K // GROUP
        col = torch.randint(0, GROUP, (G,), generator=gen, device=gen.device)
        sign = torch.where(torch.rand((G,), generator=gen, device=gen.device) < 0.5, -1.0, 1.0)
        x.view(G, GROUP)[torch.arange(G, device=gen.device), col] = 127.0 * sign
        return (x.to(dtype),)
    x = maybe_outliers(randn((M, K), dtype, gen), mode, gen)
    if mode == "zero_groups":
        x.view(M, K // GROUP, GROUP)[:, ::5] = 0
    return (x,)


def flops(dims, dtype):
    return 4.0 * dims["M"] * dims["K"]


def min_bytes(dims, dtype):
    M, K = dims["M"], dims["K"]
    return M * K * float(elem_size(dtype)) + M * K + 4.0 * M * (K // GROUP)
