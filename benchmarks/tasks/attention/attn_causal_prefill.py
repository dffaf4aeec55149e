"""Causal self-attention for prefill with grouped-query attention (GQA), [B, H, S, D] layout."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn
from benchmarks.tolerances import softmax_terms

NAME = "attn_causal_prefill"
CATEGORY = "attention"
DESCRIPTION = """
Causal scaled-dot-product attention with grouped KV heads. q[B, H, S, D], k[B, HKV, S, D],
v[B, HKV, S, D], contiguous, one dtype; H is a multiple of HKV and query head h reads KV head
h // (H // HKV). With scale = 1 / sqrt(D):
    s[b, h, i, j] = scale * sum_d q[b, h, i, d] * k[b, h // G, j, d]     for j <= i (causal)
    p[b, h, i, :] = softmax_j(s[b, h, i, :])      (max-subtracted; keys j > i get weight 0)
    o[b, h, i, d] = sum_j p[b, h, i, j] * v[b, h // G, j, d]
o is [B, H, S, D] in q's dtype. The reference materialises s and p in fp32; a kernel should not
(flash-attention: tiles of keys, online softmax with running max and sum, fp32 statistics and
accumulator; rounding p to fp16/bf16 before the P V product is the usual practice and is within
tolerance). "outlier" mode puts rare 10-1000x values in q, k and v: the softmax must subtract the
row max. bf16 is checked on GPU only (the CPU interpreter's bf16 tl.dot is wrong).
"""
ENTRY_POINT = "attn_causal_prefill"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "llama3_8b_prefill_4k", "dims": {"B": 2, "H": 32, "HKV": 8, "S": 4096, "D": 128}, "weight": 0.4,
     "phase": "prefill",
     "source": "Llama-3-8B attention (32 heads, 8 KV heads, head_dim 128), 2 x 4096-token prefill; compute-bound"},
    {"name": "llama3_70b_tp8_prefill_8k", "dims": {"B": 1, "H": 8, "HKV": 1, "S": 8192, "D": 128}, "weight": 0.3,
     "phase": "prefill",
     "source": "Llama-3-70B attention per GPU at tensor-parallel 8 (64/8 = 8 heads, 8/8 = 1 KV head), 8192-token "
               "prefill"},
    {"name": "qwen2_7b_prefill_tail", "dims": {"B": 4, "H": 28, "HKV": 4, "S": 1000, "D": 128}, "weight": 0.3,
     "phase": "prefill",
     "source": "Qwen2-7B attention (28 heads, 4 KV heads, head_dim 128), 4 x 1000-token prefill (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 1, "H": 4, "HKV": 2, "S": 20, "D": 16}},
    {"name": "tail", "dims": {"B": 1, "H": 2, "HKV": 1, "S": 37, "D": 32}},
]
# o is a convex combination of v rows (|o| <= max |v|, O(1) in standard mode). fp32: online vs
# two-pass softmax and summation order differ by ~1e-6. fp16/bf16: p rounded to the input dtype
# before P V (2^-11 / 2^-8 relative per weight) plus one rounding of o.
# "terms": attention outputs are P @ V sums. With outlier inputs a small output can be made of large
# terms, and two roundings a correct kernel makes differently from the reference scale with them:
# P rounded to the input precision before the P V product (as FlashAttention does), and scores
# of magnitude |s| carrying an fp32 rounding of about |s| * 2^-23 that exp turns into a relative
# error of P. error_terms gives sum_j p_ij |v_j| (r + 2^-16 |s_ij|), r from
# benchmarks.tolerances.PROB_ROUNDING; its coefficients are inside, so "terms" is 1.
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4, "terms": 1.0},
    "fp16": {"atol": 2e-3, "rtol": 1e-2, "terms": 1.0},
    "bf16": {"atol": 1.5e-2, "rtol": 2e-2, "terms": 1.0},
}
FORBIDDEN = ("torch.nn.functional.scaled_dot_product_attention", "torch.nn.attention", "torch.softmax",
             "torch.nn.functional.softmax", "torch.matmul", "torch.bmm", "torch.baddbmm", "torch.einsum",
             "torch.Tensor.softmax", "torch._scaled_dot_product_flash_attention",
             "torch._scaled_dot_product_efficient_attention", "torch._fused_sdp_choice")


def _scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Causally masked fp32 scores [B, H, S, S] (-inf above the diagonal)."""
    B, H, S, D = q.shape
    kf = k.float().repeat_interleave(H // k.shape[1], dim=1)
    s = torch.matmul(q.float(), kf.transpose(-1, -2)) * D ** -0.5
    causal = torch.ones((S, S), dtype=torch.bool, device=q.device).tril()
    return s.masked_fill(~causal, float("-inf"))


def attn_causal_prefill(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    s = _scores(q, k)
    vf = v.float().repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    p = torch.exp(s - s.amax(dim=-1, keepdim=True))
    p = p / p.sum(dim=-1, keepdim=True)
    return torch.matmul(p, vf).to(q.dtype)


def error_terms(q, k, v):
    """sum_j p_ij |v_j| (r + 2^-16 |s_ij|) per output element (see TOLERANCE)."""
    va = v.float().abs().repeat_interleave(q.shape[1] // k.shape[1], dim=1)
    return softmax_terms(_scores(q, k), va, q.dtype)


def make_inputs(dims, dtype, mode, gen):
    B, H, HKV, S, D = dims["B"], dims["H"], dims["HKV"], dims["S"], dims["D"]
    q = maybe_outliers(randn((B, H, S, D), dtype, gen), mode, gen)
    k = maybe_outliers(randn((B, HKV, S, D), dtype, gen), mode, gen)
    v = maybe_outliers(randn((B, HKV, S, D), dtype, gen), mode, gen)
    return (q, k, v)


def flops(dims, dtype):
    B, H, S, D = dims["B"], dims["H"], dims["S"], dims["D"]
    # Q K^T and P V over the causal half (S (S + 1) / 2 pairs), 2 FLOPs per multiply-add each
    return 4.0 * B * H * D * (S * (S + 1) / 2)


def min_bytes(dims, dtype):
    B, H, HKV, S, D = dims["B"], dims["H"], dims["HKV"], dims["S"], dims["D"]
    # q and o, k and v once
    return (2 * B * H * S * D + 2 * B * HKV * S * D) * float(elem_size(dtype))
