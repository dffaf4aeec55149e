"""Variable-length causal prefill: sequences packed back to back, delimited by cu_seqlens (flash-attn varlen)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn
from benchmarks.tolerances import softmax_terms

NAME = "attn_varlen_prefill"
CATEGORY = "attention"
DESCRIPTION = """
Causal attention over B sequences packed without padding, as a serving engine batches prefill
requests (the flash_attn_varlen_func convention). q[T, H, D], k[T, HKV, D], v[T, HKV, D] hold all
T tokens; sequence i owns rows cu_seqlens[i] .. cu_seqlens[i+1]-1 (cu_seqlens int32 [B + 1],
cu_seqlens[0] = 0, cu_seqlens[B] = T); max_seqlen (a Python int) is the longest sequence, given so
a kernel can size its grid without reading the lengths back. Tokens attend only within their own
sequence, causally; query head h reads KV head h // (H // HKV). For token r at position i of its
sequence starting at c, with scale = 1 / sqrt(D):
    o[r, h, :] = sum_{j <= i} softmax_j(scale * q[r, h] . k[c + j, h // G]) * v[c + j, h // G]
o is [T, H, D] in q's dtype; fp32 statistics and accumulation, max-subtracted softmax. Sequence
lengths are a ramp (the i-th shortest is about (i+1)/B of the longest), shuffled: short and long
requests mixed. "outlier" mode puts rare 10-1000x values in q, k and v. bf16 is checked on GPU only.
"""
ENTRY_POINT = "attn_varlen_prefill"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "llama3_8b_packed_16k", "dims": {"T": 16384, "B": 16, "H": 32, "HKV": 8, "D": 128}, "weight": 0.35,
     "phase": "prefill",
     "source": "Llama-3-8B attention (32 heads, 8 KV heads, head_dim 128), 16 prompts packed into 16384 tokens"},
    {"name": "llama3_70b_tp8_packed_32k", "dims": {"T": 32768, "B": 8, "H": 8, "HKV": 1, "D": 128}, "weight": 0.25,
     "phase": "prefill",
     "source": "Llama-3-70B attention per GPU at tensor-parallel 8 (8 heads, 1 KV head), 8 long prompts in 32768 "
               "tokens"},
    {"name": "mixtral_chat_packed_4k", "dims": {"T": 4096, "B": 64, "H": 32, "HKV": 8, "D": 128}, "weight": 0.2,
     "phase": "prefill",
     "source": "Mixtral-8x7B attention (32 heads, 8 KV heads), 64 short chat prompts packed into 4096 tokens"},
    {"name": "qwen2_7b_packed_tail", "dims": {"T": 8000, "B": 7, "H": 28, "HKV": 4, "D": 128}, "weight": 0.2,
     "phase": "prefill",
     "source": "Qwen2-7B attention (28 heads, 4 KV heads, head_dim 128), 7 prompts in 8000 tokens (tail sizes)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"T": 40, "B": 2, "H": 4, "HKV": 2, "D": 16}},
    {"name": "tail", "dims": {"T": 50, "B": 2, "H": 2, "HKV": 1, "D": 32}},
]
# o is a convex combination of v rows, O(1) in standard mode. fp32: online vs two-pass softmax
# ~1e-6. fp16/bf16: p rounded to the input dtype before P V, o rounded once.
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


def seq_lengths(T: int, B: int) -> list[int]:
    """The packed sequences' lengths before shuffling: a ramp proportional to 1..B summing to T."""
    total = B * (B + 1) // 2
    lens = [max(1, T * (i + 1) // total) for i in range(B)]
    lens[-1] += T - sum(lens)
    return lens


def _per_sequence(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens: torch.Tensor):
    """For each packed sequence: (its rows, causally masked fp32 scores [H, n, n], V [H, n, D])."""
    T, H, D = q.shape
    G = H // k.shape[1]
    bounds = cu_seqlens.tolist()
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        n = end - start
        qf = q[start:end].float().transpose(0, 1)  # [H, n, D]
        kf = k[start:end].float().transpose(0, 1).repeat_interleave(G, dim=0)
        vf = v[start:end].float().transpose(0, 1).repeat_interleave(G, dim=0)
        s = torch.matmul(qf, kf.transpose(-1, -2)) * D ** -0.5
        causal = torch.ones((n, n), dtype=torch.bool, device=q.device).tril()
        yield slice(start, end), s.masked_fill(~causal, float("-inf")), vf


def attn_varlen_prefill(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens: torch.Tensor,
                        max_seqlen: int) -> torch.Tensor:
    o = torch.empty_like(q)
    for rows, s, vf in _per_sequence(q, k, v, cu_seqlens):
        p = torch.exp(s - s.amax(dim=-1, keepdim=True))
        p = p / p.sum(dim=-1, keepdim=True)
        o[rows] = torch.matmul(p, vf).transpose(0, 1).to(q.dtype)
    return o


def error_terms(q, k, v, cu_seqlens, max_seqlen):
    """sum_j p_ij |v_j| (r + 2^-16 |s_ij|) per output element (see TOLERANCE)."""
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    for rows, s, vf in _per_sequence(q, k, v, cu_seqlens):
        out[rows] = softmax_terms(s, vf.abs(), q.dtype).transpose(0, 1)
    return out


def make_inputs(dims, dtype, mode, gen):
    T, B, H, HKV, D = dims["T"], dims["B"], dims["H"], dims["HKV"], dims["D"]
    lens_list = seq_lengths(T, B)
    lens = torch.tensor(lens_list, dtype=torch.int32, device=gen.device)
    lens = lens[torch.randperm(B, generator=gen, device=gen.device)]
    cu = torch.zeros(B + 1, dtype=torch.int32, device=gen.device)
    cu[1:] = torch.cumsum(lens, 0).to(torch.int32)
    q = maybe_outliers(randn((T, H, D), dtype, gen), mode, gen)
    k = maybe_outliers(randn((T, HKV, D), dtype, gen), mode, gen)
    v = maybe_outliers(randn((T, HKV, D), dtype, gen), mode, gen)
    return (q, k, v, cu, max(lens_list))


def flops(dims, dtype):
    pairs = sum(n * (n + 1) / 2 for n in seq_lengths(dims["T"], dims["B"]))
    return 4.0 * dims["H"] * dims["D"] * pairs


def min_bytes(dims, dtype):
    T, B, H, HKV, D = dims["T"], dims["B"], dims["H"], dims["HKV"], dims["D"]
    return (2 * T * H * D + 2 * T * HKV * D) * float(elem_size(dtype)) + 4.0 * (B + 1)
