"""Decode attention: one new query token per sequence against a contiguous KV cache of varying lengths."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn
from benchmarks.tolerances import softmax_terms

NAME = "attn_decode"
CATEGORY = "attention"
DESCRIPTION = """
Single-token (decode) attention with grouped KV heads over a static, contiguous KV cache (the
gpt-fast / Hugging Face StaticCache layout). q[B, H, D] is the new token of each of B sequences;
k_cache, v_cache[B, HKV, S_MAX, D] hold the cached keys/values, of which only the first
seq_lens[b] positions (int32, 1 <= seq_lens[b] <= S_MAX) of sequence b are valid -- the rest is
stale data that must be ignored (and need not be read). Query head h reads KV head h // (H // HKV).
With scale = 1 / sqrt(D):
    s[b, h, j] = scale * sum_d q[b, h, d] * k_cache[b, h // G, j, d]     for j < seq_lens[b]
    o[b, h, :] = sum_j softmax_j(s[b, h, :]) * v_cache[b, h // G, j, :]
o is [B, H, D] in q's dtype; statistics and accumulation in fp32 with a max-subtracted softmax.
Lengths are spread evenly over 1..S_MAX and shuffled, so a batch mixes short and long contexts:
a fast kernel splits long sequences across programs (flash-decoding) and reads each KV head once
for all the query heads that share it. "outlier" mode puts rare 10-1000x values in q and the cache.
bf16 is checked on GPU only (the CPU interpreter's bf16 tl.dot is wrong).
"""
ENTRY_POINT = "attn_decode"
DTYPES = ("fp32", "fp16", "bf16")
SPARSE_READS = True  # cache positions past seq_lens[b] are not read
SHAPES = [
    {"name": "llama3_8b_b32_4k", "dims": {"B": 32, "H": 32, "HKV": 8, "S_MAX": 4096, "D": 128}, "weight": 0.35,
     "phase": "decode",
     "source": "Llama-3-8B decode (32 heads, 8 KV heads, head_dim 128), batch 32, contexts up to 4096"},
    {"name": "llama3_70b_tp8_b64_8k", "dims": {"B": 64, "H": 8, "HKV": 1, "S_MAX": 8192, "D": 128}, "weight": 0.25,
     "phase": "decode",
     "source": "Llama-3-70B decode per GPU at tensor-parallel 8 (8 heads, 1 KV head), batch 64, contexts up to 8192"},
    {"name": "llama3_8b_b1_16k", "dims": {"B": 1, "H": 32, "HKV": 8, "S_MAX": 16384, "D": 128}, "weight": 0.2,
     "phase": "decode",
     "source": "Llama-3-8B decode, a single sequence (its length is S_MAX), 16384-token context: needs split-KV"},
    {"name": "qwen2_7b_b13_32k_tail", "dims": {"B": 13, "H": 28, "HKV": 4, "S_MAX": 32768, "D": 128}, "weight": 0.2,
     "phase": "decode",
     "source": "Qwen2-7B decode (28 heads, 4 KV heads, head_dim 128), batch 13 (tail), contexts up to 32768"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "H": 4, "HKV": 2, "S_MAX": 40, "D": 16}},
    {"name": "tail", "dims": {"B": 2, "H": 6, "HKV": 2, "S_MAX": 70, "D": 32}},
]
# o is a convex combination of v rows, O(1) in standard mode. fp32: split/merge order ~1e-6.
# fp16/bf16: p rounded to the cache dtype before P V (2^-11 / 2^-8 per weight), o rounded once.
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
             "torch._scaled_dot_product_efficient_attention")


def seq_lengths(B: int, S_MAX: int) -> list[int]:
    """The batch's context lengths before shuffling: spread evenly over 1..S_MAX."""
    return [max(1, S_MAX * (i + 1) // B) for i in range(B)]


def _scores(q: torch.Tensor, k_cache: torch.Tensor, seq_lens: torch.Tensor) -> torch.Tensor:
    """fp32 scores [B, H, S_MAX], -inf past each sequence's length."""
    B, H, D = q.shape
    S_MAX = k_cache.shape[2]
    kf = k_cache.float().repeat_interleave(H // k_cache.shape[1], dim=1)  # [B, H, S_MAX, D]
    s = torch.matmul(kf, q.float()[:, :, :, None])[..., 0] * D ** -0.5
    valid = torch.arange(S_MAX, device=q.device)[None, :] < seq_lens[:, None].to(torch.int64)
    return s.masked_fill(~valid[:, None, :], float("-inf"))


def attn_decode(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, seq_lens: torch.Tensor) -> torch.Tensor:
    s = _scores(q, k_cache, seq_lens)
    vf = v_cache.float().repeat_interleave(q.shape[1] // k_cache.shape[1], dim=1)
    p = torch.exp(s - s.amax(dim=-1, keepdim=True))
    p = p / p.sum(dim=-1, keepdim=True)
    return torch.matmul(p[:, :, None, :], vf)[:, :, 0, :].to(q.dtype)


def error_terms(q, k_cache, v_cache, seq_lens):
    """sum_j p_ij |v_j| (r + 2^-16 |s_ij|) per output element (see TOLERANCE)."""
    va = v_cache.float().abs().repeat_interleave(q.shape[1] // k_cache.shape[1], dim=1)  # [B, H, S_MAX, D]
    return softmax_terms(_scores(q, k_cache, seq_lens)[:, :, None, :], va, q.dtype)[:, :, 0, :]


def make_inputs(dims, dtype, mode, gen):
    B, H, HKV, S_MAX, D = dims["B"], dims["H"], dims["HKV"], dims["S_MAX"], dims["D"]
    lens = torch.tensor(seq_lengths(B, S_MAX), dtype=torch.int32, device=gen.device)
    lens = lens[torch.randperm(B, generator=gen, device=gen.device)].contiguous()
    q = maybe_outliers(randn((B, H, D), dtype, gen), mode, gen)
    k_cache = maybe_outliers(randn((B, HKV, S_MAX, D), dtype, gen), mode, gen)
    v_cache = maybe_outliers(randn((B, HKV, S_MAX, D), dtype, gen), mode, gen)
    return (q, k_cache, v_cache, lens)


def flops(dims, dtype):
    total = sum(seq_lengths(dims["B"], dims["S_MAX"]))
    return 4.0 * dims["H"] * dims["D"] * total


def min_bytes(dims, dtype):
    B, H, HKV, D = dims["B"], dims["H"], dims["HKV"], dims["D"]
    total = sum(seq_lengths(B, dims["S_MAX"]))
    # the valid K and V rows, q and o, the lengths
    return (2 * total * HKV * D + 2 * B * H * D) * float(elem_size(dtype)) + 4.0 * B
