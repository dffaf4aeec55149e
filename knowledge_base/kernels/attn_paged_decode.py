"""Paged decode attention: page-table gather, GQA head grouping, split-KV with a fixed-order merge.

Op: o[b, h] = softmax(q[b, h] . K_b^T / sqrt(D)) V_b over the first seq_lens[b] tokens, token t of
sequence b living in page block_tables[b, t // PAGE], row t % PAGE of k_cache/v_cache
[NUM_PAGES, PAGE, HKV, D]; query head h reads KV head h // G (G = H / HKV).
Traffic: memory-bound: every valid token's K and V row for each KV head once (D contiguous
elements, 256 bytes in bf16: coalesced), plus one int32 table entry per page. Stale table
entries and rows past the length are never loaded.
Tiling: program (b, kv head, split) holds the G query heads of one KV head as a [BLOCK_G, D]
tile (BLOCK_G >= 16 for tl.dot; padding rows are zero and not stored) and walks its split's
tokens BLOCK_N = PAGES_PER_TILE * PAGE at a time: each token's page id is gathered from the
table (the same id repeats PAGE times and hits L1), then the K/V rows are loaded with int64 page
offsets (pools pass 2^31 elements). Online softmax in base 2 with fp32 statistics; p is cast to
the cache dtype for the P V product.
Split-KV (flash-decoding): NUM_SPLITS chunks per sequence, chunk length derived on the device
from seq_lens[b] as a multiple of BLOCK_N; partial (acc, m, l) go to a workspace and a merge
kernel (a batch entry x up to 8 heads per program) combines them in a fixed order (deterministic).
Tunables: PAGES_PER_TILE (1-8, BLOCK_N = 16-128 tokens), NUM_SPLITS (auto: about two waves,
chunks of at least MIN_CHUNK tokens), num_warps (4), num_stages (2-3).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "attention",
    "category": "attention",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["paged_kv", "page_table_gather", "flash_decoding", "split_kv", "gqa_grouping",
                   "online_softmax", "exp2_softmax", "deterministic_merge", "length_masking", "int64_offsets"],
    "tunables": {"PAGES_PER_TILE": [1, 2, 4, 8], "NUM_SPLITS": [0, 1, 2, 4, 8, 16], "MIN_CHUNK": [64, 256, 512],
                 "num_warps": [4], "num_stages": [2, 3]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"attn_paged_decode_bf16": 0.6177, "attn_paged_decode_fp16": 0.6057, "attn_paged_decode_fp32": 0.1009, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _paged_partial_kernel(q_ptr, k_ptr, v_ptr, bt_ptr, lens_ptr, acc_ptr, ml_ptr, qk_scale, H, stride_qb, stride_qh,
                          stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh, stride_bt,
                          G: tl.constexpr, BLOCK_G: tl.constexpr, D: tl.constexpr, PAGE: tl.constexpr,
                          BLOCK_N: tl.constexpr, NUM_SPLITS: tl.constexpr, IEEE_FP32: tl.constexpr):
    # split-KV (flash-decoding): axis 0 the sequence, axis 1 the KV head, axis 2 which slice of the
    # keys. One query token per sequence gives only B * HKV programs, too few for the SMs, so the
    # keys are split and the slices merged by a second kernel
    b = tl.program_id(0)
    kvh = tl.program_id(1)
    split = tl.program_id(2)
    seq_len = tl.load(lens_ptr + b)
    per_split = (seq_len + NUM_SPLITS - 1) // NUM_SPLITS
    # slice length rounded up to whole BLOCK_N tiles; trailing splits of a short sequence may be
    # empty (start >= end: the loop does not run and they store m = -inf, l = 0)
    chunk = (per_split + BLOCK_N - 1) // BLOCK_N * BLOCK_N
    start = split * chunk
    end = tl.minimum(start + chunk, seq_len)

    offs_g = tl.arange(0, BLOCK_G)
    offs_d = tl.arange(0, D)
    offs_n = tl.arange(0, BLOCK_N)
    # the G query heads that share this KV head are processed together as the M side of tl.dot
    # (padded to BLOCK_G >= 16 rows: tl.dot's minimum), so each K/V tile is read once for all of
    # them
    g_ok = offs_g < G
    heads = kvh * G + offs_g
    b64 = b.to(tl.int64)
    q = tl.load(q_ptr + b64 * stride_qb + heads[:, None] * stride_qh + offs_d[None, :], mask=g_ok[:, None],
                other=0.0)
    # paged KV cache: token t of sequence b lives in page block_tables[b, t // PAGE], row t % PAGE;
    # pages are [PAGE, HKV, D] blocks anywhere in the pool
    table = bt_ptr + b64 * stride_bt
    k_head = k_ptr + kvh.to(tl.int64) * stride_kh + offs_d[None, :]
    v_head = v_ptr + kvh.to(tl.int64) * stride_vh + offs_d[None, :]

    # online softmax state per query head, fp32
    m_i = tl.full([BLOCK_G], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, D], tl.float32)
    for n0 in range(start, end, BLOCK_N):
        tok = n0 + offs_n
        t_ok = tok < end
        # one page id per token of the tile (a tile spans PAGES_PER_TILE pages); masked tokens read
        # page 0, which exists, and are zeroed anyway
        page = tl.load(table + tok // PAGE, mask=t_ok, other=0).to(tl.int64)
        row = (tok % PAGE)[:, None]
        k = tl.load(k_head + page[:, None] * stride_kp + row * stride_kt, mask=t_ok[:, None], other=0.0)
        v = tl.load(v_head + page[:, None] * stride_vp + row * stride_vt, mask=t_ok[:, None], other=0.0)
        if IEEE_FP32:
            s = tl.dot(q, tl.trans(k), input_precision="ieee")
        else:
            s = tl.dot(q, tl.trans(k))
        s = tl.where(t_ok[None, :], s * qk_scale, float("-inf"))
        # online softmax in base 2 (qk_scale holds log2 e)
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        if IEEE_FP32:
            acc = tl.dot(p, v, acc, input_precision="ieee")
        else:
            acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new

    # unnormalised partials (acc, m, l) per (sequence, head, split) for the merge kernel
    rows = (b64 * H + heads) * NUM_SPLITS + split
    tl.store(acc_ptr + rows[:, None] * D + offs_d[None, :], acc, mask=g_ok[:, None])
    tl.store(ml_ptr + rows * 2, m_i, mask=g_ok)
    tl.store(ml_ptr + rows * 2 + 1, l_i, mask=g_ok)


@triton.jit
def _merge_kernel(acc_ptr, ml_ptr, o_ptr, H, stride_ob, stride_oh, D: tl.constexpr, HEADS: tl.constexpr,
                  NUM_SPLITS: tl.constexpr, SPLITS_PAD: tl.constexpr):
    b = tl.program_id(0)
    offs_h = tl.program_id(1) * HEADS + tl.arange(0, HEADS)
    offs_s = tl.arange(0, SPLITS_PAD)
    offs_d = tl.arange(0, D)
    # merge: one program per sequence and group of HEADS heads, all splits at once
    ok = (offs_h[:, None] < H) & (offs_s[None, :] < NUM_SPLITS)
    rows = (b.to(tl.int64) * H + offs_h[:, None]) * NUM_SPLITS + offs_s[None, :]
    m = tl.load(ml_ptr + rows * 2, mask=ok, other=float("-inf"))
    lsum = tl.load(ml_ptr + rows * 2 + 1, mask=ok, other=0.0)
    acc = tl.load(acc_ptr + rows[:, :, None] * D + offs_d[None, None, :], mask=ok[:, :, None], other=0.0)
    m_max = tl.max(m, axis=1)  # finite for real heads: split 0 always holds at least one token
    m_max = tl.where(m_max == float("-inf"), 0.0, m_max)
    # log-sum-exp merge: split weight 2**(m_split - m_max); empty splits weigh 0
    w = tl.where(m == float("-inf"), 0.0, tl.exp2(m - m_max[:, None]))
    den = tl.sum(lsum * w, axis=1)
    # padding heads: avoid 0/0 (never stored)
    den = tl.where(den == 0.0, 1.0, den)
    o = tl.sum(acc * w[:, :, None], axis=1) / den[:, None]
    o_ptrs = o_ptr + b.to(tl.int64) * stride_ob + offs_h[:, None] * stride_oh + offs_d[None, :]
    tl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=(offs_h < H)[:, None])


def attn_paged_decode(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_tables: torch.Tensor,
                      seq_lens: torch.Tensor, PAGES_PER_TILE: int = 4, NUM_SPLITS: int = 0, MIN_CHUNK: int = 64,
                      num_warps: int = 4, num_stages: int = 2, target_programs: int = 264) -> torch.Tensor:
    assert q.dim() == 3 and k_cache.dim() == 4 and k_cache.shape == v_cache.shape
    B, H, D = q.shape
    PAGE, HKV = k_cache.shape[1], k_cache.shape[2]
    assert H % HKV == 0 and D == triton.next_power_of_2(D) and D >= 16
    q, k_cache, v_cache = q.contiguous(), k_cache.contiguous(), v_cache.contiguous()
    tables, lens = block_tables.contiguous(), seq_lens.contiguous()
    G = H // HKV
    if q.dtype == torch.float32:
        PAGES_PER_TILE = min(PAGES_PER_TILE, 2)
    # a key tile is a whole number of pages, so a tile never needs a partial page
    BLOCK_N = PAGE * PAGES_PER_TILE
    s_max = tables.shape[1] * PAGE
    if NUM_SPLITS <= 0:
        NUM_SPLITS = max(1, min(triton.cdiv(target_programs, B * HKV), triton.cdiv(s_max, MIN_CHUNK), 64))
    acc = torch.empty((B * H * NUM_SPLITS, D), dtype=torch.float32, device=q.device)
    ml = torch.empty((B * H * NUM_SPLITS, 2), dtype=torch.float32, device=q.device)
    qk_scale = D ** -0.5 * 1.4426950408889634
    _paged_partial_kernel[(B, HKV, NUM_SPLITS)](
        q, k_cache, v_cache, tables, lens, acc, ml, qk_scale, H, q.stride(0), q.stride(1), k_cache.stride(0),
        k_cache.stride(1), k_cache.stride(2), v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        tables.stride(0), G=G, BLOCK_G=max(16, triton.next_power_of_2(G)), D=D, PAGE=PAGE, BLOCK_N=BLOCK_N,
        NUM_SPLITS=NUM_SPLITS, IEEE_FP32=q.dtype == torch.float32, num_warps=num_warps, num_stages=num_stages)
    o = torch.empty((B, H, D), dtype=q.dtype, device=q.device)
    # merge tiles of at most ~8K fp32 elements (heads x splits x D) so they stay in registers
    splits_pad = triton.next_power_of_2(NUM_SPLITS)
    heads = 1
    while heads < 8 and heads < H and 2 * heads * splits_pad * D <= 8192:
        heads *= 2
    _merge_kernel[(B, triton.cdiv(H, heads))](acc, ml, o, H, o.stride(0), o.stride(1), D=D, HEADS=heads,
                                              NUM_SPLITS=NUM_SPLITS, SPLITS_PAD=splits_pad)
    return o
