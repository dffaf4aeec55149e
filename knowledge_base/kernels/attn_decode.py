"""Decode attention over a contiguous KV cache: GQA head grouping + split-KV (flash-decoding).

Op: o[b, h] = softmax(q[b, h] . K_b^T / sqrt(D)) V_b over the first seq_lens[b] positions of
k_cache/v_cache[b, h // G] (G = H / HKV), q [B, H, D], caches [B, HKV, S_MAX, D].
Traffic: memory-bound: 2 * sum_b(len_b) * HKV * D * elem bytes of cache (stale positions past
len_b are never loaded), q and o negligible. Intensity ~ G FLOP/byte, far below the ridge.
Tiling: program (b, kv head, split) loads the G query heads sharing that KV head as a
[BLOCK_G, D] tile (BLOCK_G >= 16 so tl.dot can use tensor cores; padding rows are zero and never
stored) and walks its split's keys in BLOCK_N tiles with the online softmax (base 2, running max
m and sum l, fp32 accumulator). Grouping reads each K/V byte once for all G heads.
Split-KV: B * HKV programs (8 at batch 1) cannot fill 132 SMs, so each sequence's keys are cut
into NUM_SPLITS chunks (chunk length derived on the device from seq_lens[b], a multiple of
BLOCK_N); every split writes (acc, m, l) to a workspace and a merge kernel (one program per
batch entry and up to 8 heads) combines the splits in a fixed order: m* = max m_s,
o = sum_s exp2(m_s - m*) acc_s / sum_s exp2(m_s - m*) l_s. Empty splits (short sequences) carry
m = -inf and weigh zero. Deterministic: no atomics.
Tunables: NUM_SPLITS (auto: about two waves, chunks of at least MIN_CHUNK keys), BLOCK_N (32-128),
num_warps (4), num_stages (2-3).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "attention",
    "category": "attention",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["flash_decoding", "split_kv", "gqa_grouping", "online_softmax", "exp2_softmax",
                   "deterministic_merge", "length_masking", "fp32_accumulator", "int64_offsets"],
    "tunables": {"NUM_SPLITS": [0, 1, 2, 4, 8, 16, 32], "BLOCK_N": [32, 64, 128], "MIN_CHUNK": [32, 256, 512],
                 "num_warps": [4], "num_stages": [2, 3]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"attn_decode_bf16": 0.5512, "attn_decode_fp16": 0.5447, "attn_decode_fp32": 0.1007, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _decode_partial_kernel(q_ptr, k_ptr, v_ptr, lens_ptr, acc_ptr, ml_ptr, qk_scale, H, stride_qb, stride_qh,
                           stride_kb, stride_kh, stride_ks, stride_vb, stride_vh, stride_vs, G: tl.constexpr,
                           BLOCK_G: tl.constexpr, D: tl.constexpr, BLOCK_N: tl.constexpr,
                           NUM_SPLITS: tl.constexpr, IEEE_FP32: tl.constexpr):
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
    k_base = k_ptr + b64 * stride_kb + kvh.to(tl.int64) * stride_kh + offs_d[None, :]
    v_base = v_ptr + b64 * stride_vb + kvh.to(tl.int64) * stride_vh + offs_d[None, :]

    # online softmax state per query head, fp32
    m_i = tl.full([BLOCK_G], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_G], tl.float32)
    acc = tl.zeros([BLOCK_G, D], tl.float32)
    for n0 in range(start, end, BLOCK_N):
        keys = n0 + offs_n
        # keys past this slice (and past seq_len) load as 0 and get -inf scores
        k_ok = keys < end
        k = tl.load(k_base + keys[:, None].to(tl.int64) * stride_ks, mask=k_ok[:, None], other=0.0)
        v = tl.load(v_base + keys[:, None].to(tl.int64) * stride_vs, mask=k_ok[:, None], other=0.0)
        if IEEE_FP32:
            s = tl.dot(q, tl.trans(k), input_precision="ieee")
        else:
            s = tl.dot(q, tl.trans(k))
        s = tl.where(k_ok[None, :], s * qk_scale, float("-inf"))
        # online softmax in base 2 (qk_scale holds log2 e): rescale the running sum and accumulator
        # when the max grows
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

    # workspace rows: ((b * H + head) * NUM_SPLITS + split)
    # unnormalised partial results: acc (fp32, [D]) and (m, l) per (sequence, head, split); the
    # merge needs all three
    rows = (b64 * H + heads) * NUM_SPLITS + split
    tl.store(acc_ptr + rows[:, None] * D + offs_d[None, :], acc, mask=g_ok[:, None])
    tl.store(ml_ptr + rows * 2, m_i, mask=g_ok)
    tl.store(ml_ptr + rows * 2 + 1, l_i, mask=g_ok)


@triton.jit
def _decode_merge_kernel(acc_ptr, ml_ptr, o_ptr, H, stride_ob, stride_oh, D: tl.constexpr, HEADS: tl.constexpr,
                         NUM_SPLITS: tl.constexpr, SPLITS_PAD: tl.constexpr):
    b = tl.program_id(0)
    offs_h = tl.program_id(1) * HEADS + tl.arange(0, HEADS)
    offs_s = tl.arange(0, SPLITS_PAD)
    offs_d = tl.arange(0, D)
    # merge: one program per sequence and group of HEADS heads, all splits at once; padded
    # heads/splits are masked
    ok = (offs_h[:, None] < H) & (offs_s[None, :] < NUM_SPLITS)  # [HEADS, SPLITS_PAD]
    rows = (b.to(tl.int64) * H + offs_h[:, None]) * NUM_SPLITS + offs_s[None, :]
    m = tl.load(ml_ptr + rows * 2, mask=ok, other=float("-inf"))
    lsum = tl.load(ml_ptr + rows * 2 + 1, mask=ok, other=0.0)
    acc = tl.load(acc_ptr + rows[:, :, None] * D + offs_d[None, None, :], mask=ok[:, :, None], other=0.0)
    m_max = tl.max(m, axis=1)  # finite for real heads: split 0 always holds at least one key
    m_max = tl.where(m_max == float("-inf"), 0.0, m_max)  # padding heads
    # each split's weight is 2**(m_split - m_max): the log-sum-exp merge of partial softmaxes.
    # Empty splits (m = -inf) weigh 0 rather than exp2(nan)
    w = tl.where(m == float("-inf"), 0.0, tl.exp2(m - m_max[:, None]))
    den = tl.sum(lsum * w, axis=1)
    # padding heads have den 0: divide by 1 instead (their rows are never stored)
    den = tl.where(den == 0.0, 1.0, den)
    o = tl.sum(acc * w[:, :, None], axis=1) / den[:, None]
    o_ptrs = o_ptr + b.to(tl.int64) * stride_ob + offs_h[:, None] * stride_oh + offs_d[None, :]
    tl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=(offs_h < H)[:, None])


def attn_decode(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, seq_lens: torch.Tensor,
                NUM_SPLITS: int = 0, BLOCK_N: int = 64, MIN_CHUNK: int = 64, num_warps: int = 4,
                num_stages: int = 2, target_programs: int = 264) -> torch.Tensor:
    assert q.dim() == 3 and k_cache.dim() == 4 and k_cache.shape == v_cache.shape
    B, H, D = q.shape
    HKV, S_MAX = k_cache.shape[1], k_cache.shape[2]
    assert H % HKV == 0 and D == triton.next_power_of_2(D) and D >= 16
    q, k_cache, v_cache = q.contiguous(), k_cache.contiguous(), v_cache.contiguous()
    lens = seq_lens.contiguous()
    G = H // HKV
    if q.dtype == torch.float32:
        BLOCK_N = min(BLOCK_N, 32)
    # auto split: enough programs for about two waves, no split shorter than MIN_CHUNK keys, at
    # most 64
    if NUM_SPLITS <= 0:  # about two waves of programs, but no split shorter than MIN_CHUNK keys
        NUM_SPLITS = max(1, min(triton.cdiv(target_programs, B * HKV), triton.cdiv(S_MAX, MIN_CHUNK), 64))
    acc = torch.empty((B * H * NUM_SPLITS, D), dtype=torch.float32, device=q.device)
    ml = torch.empty((B * H * NUM_SPLITS, 2), dtype=torch.float32, device=q.device)
    qk_scale = D ** -0.5 * 1.4426950408889634
    _decode_partial_kernel[(B, HKV, NUM_SPLITS)](
        q, k_cache, v_cache, lens, acc, ml, qk_scale, H, q.stride(0), q.stride(1), k_cache.stride(0),
        k_cache.stride(1), k_cache.stride(2), v_cache.stride(0), v_cache.stride(1), v_cache.stride(2), G=G,
        BLOCK_G=max(16, triton.next_power_of_2(G)), D=D, BLOCK_N=BLOCK_N, NUM_SPLITS=NUM_SPLITS,
        IEEE_FP32=q.dtype == torch.float32, num_warps=num_warps, num_stages=num_stages)
    o = torch.empty((B, H, D), dtype=q.dtype, device=q.device)
    # merge tiles of at most ~8K fp32 elements (heads x splits x D) so they stay in registers
    splits_pad = triton.next_power_of_2(NUM_SPLITS)
    heads = 1
    while heads < 8 and heads < H and 2 * heads * splits_pad * D <= 8192:
        heads *= 2
    _decode_merge_kernel[(B, triton.cdiv(H, heads))](acc, ml, o, H, o.stride(0), o.stride(1), D=D, HEADS=heads,
                                                     NUM_SPLITS=NUM_SPLITS, SPLITS_PAD=splits_pad)
    return o
