"""Paged decode attention: one query per sequence against a vLLM-style paged KV cache (16-token pages)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn
from benchmarks.tolerances import softmax_terms

NAME = "attn_paged_decode"
CATEGORY = "attention"
DESCRIPTION = """
Single-token attention with grouped KV heads over a paged KV cache (the vLLM layout).
q[B, H, D] holds the new token of each of B sequences. k_cache, v_cache[NUM_PAGES, PAGE, HKV, D]
are a pool of 16-token pages; sequence b's j-th page is block_tables[b, j] (int32, [B, MAX_PAGES],
MAX_PAGES = ceil(S_MAX / PAGE)), so its token t lives at k_cache[block_tables[b, t // PAGE],
t % PAGE]. Only the first seq_lens[b] tokens (int32, 1 <= seq_lens[b] <= S_MAX) are valid: table
entries past ceil(seq_lens[b] / PAGE) are stale (they point at other sequences' pages) and cache
rows past the length in the last page are garbage; neither may influence the result, and neither
needs to be read. Query head h reads KV head h // (H // HKV). With scale = 1 / sqrt(D):
    o[b, h, :] = sum_{t < seq_lens[b]} softmax_t(scale * q[b, h] . k_t) * v_t
o is [B, H, D] in q's dtype; fp32 statistics and accumulation, max-subtracted softmax. Pages are
scattered over the pool at random; lengths are spread evenly over 1..S_MAX and shuffled.
"outlier" mode puts rare 10-1000x values in q and the cache. bf16 is checked on GPU only.
"""
ENTRY_POINT = "attn_paged_decode"
DTYPES = ("fp32", "fp16", "bf16")
SPARSE_READS = True  # only the valid tokens' pages and table entries are read
SHAPES = [
    {"name": "llama3_8b_b64_4k", "dims": {"B": 64, "H": 32, "HKV": 8, "S_MAX": 4096, "D": 128, "PAGE": 16},
     "weight": 0.35, "phase": "decode",
     "source": "Llama-3-8B decode under vLLM paged attention (32 heads, 8 KV heads, head_dim 128, 16-token pages), "
               "batch 64, contexts up to 4096"},
    {"name": "llama3_70b_tp8_b128_8k", "dims": {"B": 128, "H": 8, "HKV": 1, "S_MAX": 8192, "D": 128, "PAGE": 16},
     "weight": 0.25, "phase": "decode",
     "source": "Llama-3-70B decode per GPU at tensor-parallel 8 (8 heads, 1 KV head), batch 128, contexts up to 8192"},
    {"name": "mixtral_b256_2k", "dims": {"B": 256, "H": 32, "HKV": 8, "S_MAX": 2048, "D": 128, "PAGE": 16},
     "weight": 0.2, "phase": "decode",
     "source": "Mixtral-8x7B attention (32 heads, 8 KV heads, head_dim 128), batch-256 chat decode, contexts up "
               "to 2048"},
    {"name": "qwen2_7b_b13_32k_tail", "dims": {"B": 13, "H": 28, "HKV": 4, "S_MAX": 32768, "D": 128, "PAGE": 16},
     "weight": 0.2, "phase": "decode",
     "source": "Qwen2-7B decode (28 heads, 4 KV heads), batch 13 (tail), long contexts up to 32768"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "H": 4, "HKV": 2, "S_MAX": 40, "D": 16, "PAGE": 16}},
    {"name": "tail", "dims": {"B": 2, "H": 6, "HKV": 2, "S_MAX": 70, "D": 32, "PAGE": 16}},
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
             "torch._scaled_dot_product_efficient_attention", "torch.index_select", "torch.gather")


def seq_lengths(B: int, S_MAX: int) -> list[int]:
    """The batch's context lengths before shuffling: spread evenly over 1..S_MAX."""
    return [max(1, S_MAX * (i + 1) // B) for i in range(B)]


def _per_sequence(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_tables: torch.Tensor,
                  seq_lens: torch.Tensor):
    """For each sequence b: (b, fp32 scores [n, H], V [n, H, D]) gathered through its pages."""
    B, H, D = q.shape
    PAGE, HKV = k_cache.shape[1], k_cache.shape[2]
    G = H // HKV
    for b, n in enumerate(seq_lens.tolist()):
        pages = block_tables[b, : (n + PAGE - 1) // PAGE].long()
        k = k_cache[pages].reshape(-1, HKV, D)[:n].float().repeat_interleave(G, dim=1)  # [n, H, D]
        v = v_cache[pages].reshape(-1, HKV, D)[:n].float().repeat_interleave(G, dim=1)
        yield b, (k * q[b].float()[None]).sum(-1) * D ** -0.5, v


def attn_paged_decode(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_tables: torch.Tensor,
                      seq_lens: torch.Tensor) -> torch.Tensor:
    o = torch.empty(q.shape, dtype=q.dtype, device=q.device)
    for b, s, v in _per_sequence(q, k_cache, v_cache, block_tables, seq_lens):
        p = torch.exp(s - s.amax(dim=0, keepdim=True))
        p = p / p.sum(dim=0, keepdim=True)
        o[b] = (p[:, :, None] * v).sum(0).to(q.dtype)
    return o


def error_terms(q, k_cache, v_cache, block_tables, seq_lens):
    """sum_j p_ij |v_j| (r + 2^-16 |s_ij|) per output element (see TOLERANCE)."""
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    for b, s, v in _per_sequence(q, k_cache, v_cache, block_tables, seq_lens):
        out[b] = softmax_terms(s.t()[:, None, :], v.abs().transpose(0, 1), q.dtype)[:, 0, :]
    return out


def make_inputs(dims, dtype, mode, gen):
    B, H, HKV, S_MAX, D, PAGE = dims["B"], dims["H"], dims["HKV"], dims["S_MAX"], dims["D"], dims["PAGE"]
    dev = gen.device
    lens = torch.tensor(seq_lengths(B, S_MAX), dtype=torch.int32, device=dev)
    lens = lens[torch.randperm(B, generator=gen, device=dev)].contiguous()
    max_pages = (S_MAX + PAGE - 1) // PAGE
    need = ((lens + PAGE - 1) // PAGE).to(torch.int64)
    used = int(need.sum())
    num_pages = used + used // 8 + 1  # a pool with some free pages
    pool = torch.randperm(num_pages, generator=gen, device=dev).to(torch.int32)
    # stale entries past each sequence's pages point at random pages of the pool
    tables = torch.randint(0, num_pages, (B, max_pages), generator=gen, device=dev, dtype=torch.int32)
    starts = torch.cumsum(need, 0) - need
    j = torch.arange(max_pages, device=dev)[None, :]
    live = j < need[:, None]
    tables = torch.where(live, pool[(starts[:, None] + j).clamp(max=num_pages - 1)], tables).contiguous()
    q = maybe_outliers(randn((B, H, D), dtype, gen), mode, gen)
    k_cache = maybe_outliers(randn((num_pages, PAGE, HKV, D), dtype, gen), mode, gen)
    v_cache = maybe_outliers(randn((num_pages, PAGE, HKV, D), dtype, gen), mode, gen)
    return (q, k_cache, v_cache, tables, lens)


def flops(dims, dtype):
    total = sum(seq_lengths(dims["B"], dims["S_MAX"]))
    return 4.0 * dims["H"] * dims["D"] * total


def min_bytes(dims, dtype):
    B, H, HKV, D, PAGE = dims["B"], dims["H"], dims["HKV"], dims["D"], dims["PAGE"]
    lens = seq_lengths(B, dims["S_MAX"])
    pages = sum((n + PAGE - 1) // PAGE for n in lens)
    # valid K and V rows, q and o, the live table entries, the lengths
    return (2 * sum(lens) * HKV * D + 2 * B * H * D) * float(elem_size(dtype)) + 4.0 * (pages + B)
