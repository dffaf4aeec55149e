"""Paged-attention decode with GQA head grouping and split-KV (flash-decoding) partitions.

Op: for each sequence b and query head h (one new token), o[b, h] = softmax(q[b, h] . K_b^T *
scale) V_b over the sequence's first context_lens[b] cached tokens. K/V live in a paged cache
k_cache/v_cache[num_pages, PAGE, KV_HEADS, D]; page j of sequence b is block_tables[b, j]
(the vLLM layout). GQA: head h reads KV head h // (H // KV_HEADS).
Traffic: decode is memory-bound: every cached K and V byte of every sequence is read once,
2 * sum_b(len_b) * KV_HEADS * D * elem, plus q and o (negligible). FLOPs are 4 * H * D per
token -- intensity ~ H / KV_HEADS FLOP/byte, far below any GPU's ridge point.
Tiling: program (b, kv_head, split) loads the G = H / KV_HEADS query heads that share that KV
head (padded to BLOCK_G >= 16 rows so `tl.dot` can use tensor cores), and walks its share of
the pages one PAGE at a time with the online-softmax recurrence (running max m, sum l, fp32
accumulator rescaled by exp(m_old - m_new)). Reading each KV page once for all G heads is the
point of grouping: per-head programs would read the same K/V G times.
Split-KV: with batch 1-8 and 8 KV heads there are only 8-64 programs for 132 SMs; splitting
each sequence's pages into NUM_SPLITS partitions multiplies parallelism. Each split writes its
partial (o unnormalised, m, l); a second kernel merges splits in a fixed order:
m* = max m_s; l* = sum l_s * exp(m_s - m*); o = sum o_s * exp(m_s - m*) / l*. Empty splits
(short sequences) have m = -inf and weigh 0.
Tunables: NUM_SPLITS (1 for long batches, 4-16 for batch <= 8 with long contexts), PAGE
(the cache's page size, power of two >= 16), num_warps (4), num_stages (2-3).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "attention",
    "category": "attention",
    "dtypes": ["fp16", "bf16"],
    "techniques": [
        "paged_kv",
        "flash_decoding",
        "split_kv",
        "gqa_grouping",
        "online_softmax",
        "tensor_cores",
        "deterministic_merge",
        "decode_shapes",
    ],
    "tunables": {
        "NUM_SPLITS": [1, 2, 4, 8, 16],
        "PAGE": [16, 32, 64],
        "num_warps": [4],
        "num_stages": [2, 3],
    },
    "verified_on": ["NVIDIA H200"],
    "attainment": {"B32 H32 KVH8 D128 ctx4096 page16 bf16": 0.6823, "source": "docs/results/templates_h200.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
    "template": True,
}


@triton.jit
def _paged_decode_partial_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    bt_ptr,
    lens_ptr,
    o_ptr,
    m_ptr,
    l_ptr,
    scale,
    H,
    KV_HEADS,
    max_pages,
    pages_per_split,
    stride_qb,
    stride_qh,
    stride_kp,
    stride_kt,
    stride_kh,
    stride_bt,
    NUM_SPLITS: tl.constexpr,
    G: tl.constexpr,
    BLOCK_G: tl.constexpr,
    PAGE: tl.constexpr,
    D: tl.constexpr,
):
    # split-KV paged decode: axis 0 the sequence, axis 1 the KV head, axis 2 a slice of the
    # sequence's pages; a second kernel merges the slices
    b = tl.program_id(0)
    kvh = tl.program_id(1)
    split = tl.program_id(2)
    seq_len = tl.load(lens_ptr + b)
    g = tl.arange(0, BLOCK_G)
    d = tl.arange(0, D)
    t = tl.arange(0, PAGE)
    # the G query heads sharing this KV head form the M side of tl.dot (padded to BLOCK_G >= 16),
    # so each page of K/V is read once for all of them
    g_ok = g < G
    heads = kvh * G + g

    q = tl.load(
        q_ptr + b.to(tl.int64) * stride_qb + heads[:, None] * stride_qh + d[None, :],
        mask=g_ok[:, None],
        other=0.0,
    )
    # online softmax state per query head (running max, running sum, unnormalised output), fp32
    m = tl.full((BLOCK_G,), float("-inf"), tl.float32)
    l_sum = tl.zeros((BLOCK_G,), tl.float32)
    acc = tl.zeros((BLOCK_G, D), tl.float32)

    # this split's pages; a split past the sequence end visits none and stores m = -inf, l = 0
    n_pages = tl.cdiv(seq_len, PAGE)
    first = split * pages_per_split
    last = tl.minimum(first + pages_per_split, n_pages)
    for j in range(first, last):
        # the block table maps logical page j of sequence b to a physical page of the cache; a tile
        # is exactly one page
        page = tl.load(bt_ptr + b.to(tl.int64) * stride_bt + j).to(tl.int64)
        tok = j * PAGE + t
        # the last page may be partly filled: its tail tokens are masked to -inf
        t_ok = tok < seq_len
        kv_off = page * stride_kp + t[:, None] * stride_kt + kvh * stride_kh + d[None, :]
        k = tl.load(k_ptr + kv_off, mask=t_ok[:, None], other=0.0)
        v = tl.load(v_ptr + kv_off, mask=t_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale  # [BLOCK_G, PAGE], fp32
        s = tl.where(t_ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)  # m_new is finite: every visited page has >= 1 valid token
        p = tl.exp(s - m_new[:, None])
        l_sum = l_sum * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new

    # partials (acc, m, l) per (sequence, head, split) for the merge
    part = (b.to(tl.int64) * H + heads) * NUM_SPLITS + split  # [BLOCK_G] row index of (b, h, split)
    tl.store(o_ptr + part[:, None] * D + d[None, :], acc, mask=g_ok[:, None])
    tl.store(m_ptr + part, m, mask=g_ok)
    tl.store(l_ptr + part, l_sum, mask=g_ok)


@triton.jit
def _paged_decode_merge_kernel(
    o_part_ptr,
    m_ptr,
    l_ptr,
    out_ptr,
    stride_ob,
    stride_oh,
    H,
    NUM_SPLITS: tl.constexpr,
    D: tl.constexpr,
):
    b = tl.program_id(0)
    h = tl.program_id(1)
    row = (b.to(tl.int64) * H + h) * NUM_SPLITS
    s = tl.arange(0, NUM_SPLITS)
    d = tl.arange(0, D)
    m = tl.load(m_ptr + row + s)
    l_s = tl.load(l_ptr + row + s)
    # merge the splits: weight each by exp(m_split - m_max) (log-sum-exp merge); empty splits (m =
    # -inf) weigh 0, and an all-empty row divides by 1
    m_star = tl.max(m, axis=0)
    w = tl.where(m == float("-inf"), 0.0, tl.exp(m - m_star))
    l_star = tl.sum(l_s * w, axis=0)
    o = tl.load(o_part_ptr + (row + s)[:, None] * D + d[None, :])
    out = tl.sum(o * w[:, None], axis=0) / tl.where(l_star == 0.0, 1.0, l_star)
    tl.store(
        out_ptr + b.to(tl.int64) * stride_ob + h * stride_oh + d, out.to(out_ptr.dtype.element_ty)
    )


def paged_attention_decode(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    context_lens: torch.Tensor,
    scale: float | None = None,
    num_splits: int = 4,
    num_warps: int = 4,
) -> torch.Tensor:
    """q [B, H, D]; k/v_cache [pages, PAGE, KV_HEADS, D]; block_tables int32 [B, max_pages];
    context_lens int32 [B] -> o [B, H, D] in q's dtype."""
    B, H, D = q.shape
    _, page, kv_heads, d_k = k_cache.shape
    assert d_k == D and v_cache.shape == k_cache.shape, (
        "k/v cache must be [pages, PAGE, KV_HEADS, D]"
    )
    assert H % kv_heads == 0, "H must be a multiple of KV_HEADS (GQA)"
    assert page >= 16 and page & (page - 1) == 0, "PAGE must be a power of two >= 16 (tl.dot tile)"
    assert D >= 16 and D & (D - 1) == 0, "head dim must be a power of two >= 16"
    assert num_splits & (num_splits - 1) == 0, "num_splits must be a power of two"
    assert k_cache.stride(3) == 1 and q.stride(2) == 1
    G = H // kv_heads
    max_pages = block_tables.shape[1]
    # splits are fixed page ranges sized for the longest sequence; shorter ones leave later splits
    # empty
    pages_per_split = triton.cdiv(max_pages, num_splits)
    scale = D**-0.5 if scale is None else scale
    rows = B * H * num_splits
    o_part = torch.empty((rows, D), device=q.device, dtype=torch.float32)
    m_part = torch.empty((rows,), device=q.device, dtype=torch.float32)
    l_part = torch.empty((rows,), device=q.device, dtype=torch.float32)
    _paged_decode_partial_kernel[(B, kv_heads, num_splits)](
        q,
        k_cache,
        v_cache,
        block_tables,
        context_lens,
        o_part,
        m_part,
        l_part,
        scale,
        H,
        kv_heads,
        max_pages,
        pages_per_split,
        q.stride(0),
        q.stride(1),
        k_cache.stride(0),
        k_cache.stride(1),
        k_cache.stride(2),
        block_tables.stride(0),
        NUM_SPLITS=num_splits,
        G=G,
        BLOCK_G=max(16, triton.next_power_of_2(G)),
        PAGE=page,
        D=D,
        num_warps=num_warps,
    )
    out = torch.empty_like(q)
    _paged_decode_merge_kernel[(B, H)](
        o_part, m_part, l_part, out, out.stride(0), out.stride(1), H, NUM_SPLITS=num_splits, D=D
    )
    return out
