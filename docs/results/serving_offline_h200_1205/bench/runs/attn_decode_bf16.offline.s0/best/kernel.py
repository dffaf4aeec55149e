"""Decode attention over a static, contiguous KV cache: split-KV (flash-decoding), GQA grouping.

Op: one new query token per sequence. q[B, H, D]; k_cache, v_cache[B, HKV, S_MAX, D] (the
gpt-fast / Hugging Face StaticCache layout) of which only the first seq_lens[b] positions of
sequence b are valid (1 <= seq_lens[b] <= S_MAX; the rest is stale and never read). Query head h
reads KV head h // G with G = H / HKV, and with scale = 1 / sqrt(D)
    o[b, h] = softmax_j(scale * q[b, h] . k_cache[b, h // G, j]) @ v_cache[b, h // G, :len_b],
fp32 statistics and accumulator, o in q's dtype.
Traffic: memory-bound. Each valid K and V row is read once: 2 * sum_b(len_b) * HKV * D * elem
bytes, plus q, o and the fp32 split partials (B * H * NUM_SPLITS * (D + 2) * 4, written and read
once -- small next to the cache). FLOPs are 4 * H * D per cached token, an intensity of about G
FLOP/byte: far below any GPU's ridge point, so the goal is streaming the cache at full bandwidth.
Tiling: pass 1 runs on grid (B, HKV, NUM_SPLITS). Program (b, kvh, split) loads the G query heads
that share KV head kvh as the rows of a [BLOCK_G, BLOCK_D] tile (padded to BLOCK_G >= 16 rows so
both products are `tl.dot`s on tensor cores; padded rows load q = 0 and are never stored), so each
K/V tile is read once for all G heads -- per-head programs would read the same bytes G times.
It walks its share of the sequence's tiles in BLOCK_N-row steps: s = q k^T (fp32), then the
online softmax -- running max m' = max(m, rowmax(s)), sum and accumulator rescaled by
exp(m - m'), p = exp(s - m'), l += rowsum(p), acc += p v (p rounded to the cache dtype).
Split-KV: B * HKV programs alone leave most of ~132 SMs idle at small batch (B = 1, HKV = 8: 8
programs), and a mixed batch is only as fast as its longest sequence's program. Each sequence's
cdiv(len_b, BLOCK_N) tiles are cut into NUM_SPLITS contiguous shares, so programs get work
in proportion to their sequence and a long context spreads over many SMs. Each split writes
its partial (acc unnormalised, m, l) to fp32 scratch; pass 2, grid (B, H), merges them in a
fixed order (deterministic): m* = max_s m_s, w_s = exp(m_s - m*), o = sum_s w_s acc_s /
sum_s w_s l_s. A short sequence can leave splits empty (fewer tiles than splits): they store
m = -inf and the merge neither reads their accumulator nor weighs them. With NUM_SPLITS = 1
pass 1 normalises and writes o itself and pass 2 is not launched.
Choosing NUM_SPLITS (host, from shapes only -- reading seq_lens would synchronise): aim for about
two programs per SM; 1 when B * HKV already reaches that; never so many that a split of the
longest possible sequence (S_MAX) has fewer than 4 tiles, where the partial's write and the merge
cost more than the parallelism gains.
Numerics: scores in the log2 domain (scale * log2(e) folded in, exp2). Every visited tile holds
at least one valid position, so a split's running max is finite after its first tile, and the
max subtraction keeps outlier inputs (10-1000x) from overflowing: exp2 only ever sees values
<= 0. fp32 inputs use input_precision="ieee" (tf32 would round them). Positions past len_b are
masked out of the loads (never read) and set to -inf in s.
Any shape: D need not be a power of two (BLOCK_D = next_power_of_2(D), the tail masked), any G
(BLOCK_G >= 16 rows, the extra rows masked), any strides (q, k_cache, v_cache may be views:
a slice of a larger cache, a transposed layout). int64 base offsets.
Tunables: BLOCK_N (32-128; 64 for D = 128 in bf16), NUM_SPLITS (None = the heuristic above; 1-64
to force), num_warps (4; 8 with BLOCK_N = 128 or G > 16), num_stages (2-4: the K/V loads are
software-pipelined, which is what keeps HBM busy in a memory-bound loop).
"""

import functools
import math

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "attention",
    "category": "attention",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": [
        "flash_decoding",
        "split_kv",
        "gqa_grouping",
        "online_softmax",
        "tensor_cores",
        "exp2_log2_domain",
        "fp32_accumulation",
        "deterministic_merge",
        "masking",
        "strided_views",
        "decode_shapes",
    ],
    "tunables": {
        "BLOCK_N": [32, 64, 128],
        "NUM_SPLITS": [1, 2, 4, 8, 16, 32],
        "num_warps": [4, 8],
        "num_stages": [2, 3, 4],
    },
    "verified_on": ["NVIDIA H200"],
    "attainment": {"B1 H32 HKV8 S_MAX16384 D128 mixed lengths bf16 splits=auto": 0.1499, "B32 H32 HKV8 S_MAX4096 D128 mixed lengths bf16 splits=1": 0.4729, "B32 H32 HKV8 S_MAX4096 D128 mixed lengths bf16 splits=auto": 0.5866, "source": "docs/results/templates_h200_2026-12-02.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-12-02)"},
    "template": True,
}

LOG2E = 1.4426950408889634
PROGRAMS_PER_SM = 2  # pass-1 programs the split heuristic aims for, per SM
MIN_TILES_PER_SPLIT = 4  # a split of an S_MAX-long sequence gets at least this many tiles
NOMINAL_SMS = 132  # an H100 / H200, for the heuristic when q is not on a CUDA device


@triton.jit
def _decode_split_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    lens_ptr,
    o_ptr,
    part_o_ptr,
    part_m_ptr,
    part_l_ptr,
    qk_scale,
    H,
    S_MAX,
    stride_qb,
    stride_qh,
    stride_qd,
    stride_kb,
    stride_kh,
    stride_ks,
    stride_kd,
    stride_vb,
    stride_vh,
    stride_vs,
    stride_vd,
    stride_ob,
    stride_oh,
    stride_od,
    NUM_SPLITS: tl.constexpr,
    G: tl.constexpr,
    BLOCK_G: tl.constexpr,
    BLOCK_N: tl.constexpr,
    D: tl.constexpr,
    BLOCK_D: tl.constexpr,
    PRECISION: tl.constexpr,
):
    # pass 1: axis 0 the sequence, axis 1 the KV head, axis 2 this program's share of the tiles
    b = tl.program_id(0).to(tl.int64)
    kvh = tl.program_id(1).to(tl.int64)
    split = tl.program_id(2)
    # clamped to [0, S_MAX]: a bad length can never address past the cache
    seq_len = tl.minimum(tl.maximum(tl.load(lens_ptr + b).to(tl.int32), 0), S_MAX)
    g = tl.arange(0, BLOCK_G)
    d = tl.arange(0, BLOCK_D)
    t = tl.arange(0, BLOCK_N)
    g_ok = g < G
    d_ok = d < D
    heads = kvh * G + g  # the G query heads that share KV head kvh (rows past G are padding)

    q = tl.load(
        q_ptr + b * stride_qb + heads[:, None] * stride_qh + d[None, :] * stride_qd,
        mask=g_ok[:, None] & d_ok[None, :],
        other=0.0,
    )
    k_base = k_ptr + b * stride_kb + kvh * stride_kh
    v_base = v_ptr + b * stride_vb + kvh * stride_vh
    m = tl.full((BLOCK_G,), float("-inf"), tl.float32)  # running max, log2 units
    l_sum = tl.zeros((BLOCK_G,), tl.float32)
    acc = tl.zeros((BLOCK_G, BLOCK_D), tl.float32)

    # this sequence's tiles cut into NUM_SPLITS contiguous shares; trailing shares may be empty
    n_tiles = tl.cdiv(seq_len, BLOCK_N)
    per_split = tl.cdiv(n_tiles, NUM_SPLITS)
    first = split * per_split
    last = tl.minimum(first + per_split, n_tiles)
    for j in range(first, last):
        tok = j * BLOCK_N + t
        t_ok = tok < seq_len  # only the sequence's last tile has positions past its length
        kv_mask = t_ok[:, None] & d_ok[None, :]
        k = tl.load(
            k_base + tok[:, None] * stride_ks + d[None, :] * stride_kd, mask=kv_mask, other=0.0
        )
        s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * qk_scale  # [BLOCK_G, BLOCK_N]
        s = tl.where(t_ok[None, :], s, float("-inf"))
        # online softmax: m_new is finite (the tile holds >= 1 valid position), exp2(-inf) = 0
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_sum = l_sum * alpha + tl.sum(p, axis=1)
        v = tl.load(
            v_base + tok[:, None] * stride_vs + d[None, :] * stride_vd, mask=kv_mask, other=0.0
        )
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m = m_new

    if NUM_SPLITS == 1:
        # the whole sequence was this program's: normalise and write o (no merge pass); a length
        # of 0 (outside the contract) gives zeros rather than 0/0
        out = acc / tl.where(l_sum > 0.0, l_sum, 1.0)[:, None]
        tl.store(
            o_ptr + b * stride_ob + heads[:, None] * stride_oh + d[None, :] * stride_od,
            out.to(o_ptr.dtype.element_ty),
            mask=g_ok[:, None] & d_ok[None, :],
        )
    else:
        # the partial of (b, head, split): row (b * H + head) * NUM_SPLITS + split of the scratch
        row = (b * H + heads) * NUM_SPLITS + split
        tl.store(
            part_o_ptr + row[:, None] * D + d[None, :], acc, mask=g_ok[:, None] & d_ok[None, :]
        )
        tl.store(part_m_ptr + row, m, mask=g_ok)
        tl.store(part_l_ptr + row, l_sum, mask=g_ok)


@triton.jit
def _decode_merge_kernel(
    part_o_ptr,
    part_m_ptr,
    part_l_ptr,
    o_ptr,
    H,
    stride_ob,
    stride_oh,
    stride_od,
    NUM_SPLITS: tl.constexpr,
    BLOCK_S: tl.constexpr,
    D: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    # pass 2: one program per (sequence, query head) merges its NUM_SPLITS partials
    b = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1)
    row = (b * H + h) * NUM_SPLITS
    s = tl.arange(0, BLOCK_S)
    d = tl.arange(0, BLOCK_D)
    d_ok = d < D
    m = tl.load(part_m_ptr + row + s, mask=s < NUM_SPLITS, other=float("-inf"))
    live = m > float("-inf")  # empty splits (and the padding past NUM_SPLITS) take no part
    m_star = tl.max(m, axis=0)
    m_ref = tl.where(m_star > float("-inf"), m_star, 0.0)  # all empty only for a length of 0
    w = tl.where(live, tl.exp2(m - m_ref), 0.0)
    l_s = tl.load(part_l_ptr + row + s, mask=live, other=0.0)
    l_star = tl.sum(l_s * w, axis=0)
    acc = tl.load(
        part_o_ptr + (row + s)[:, None] * D + d[None, :],
        mask=live[:, None] & d_ok[None, :],
        other=0.0,
    )
    out = tl.sum(acc * w[:, None], axis=0) / tl.where(l_star > 0.0, l_star, 1.0)
    tl.store(
        o_ptr + b * stride_ob + h * stride_oh + d * stride_od,
        out.to(o_ptr.dtype.element_ty),
        mask=d_ok,
    )


@functools.lru_cache(maxsize=16)
def _sm_count(device: torch.device) -> int:
    """Streaming multiprocessors of `device` (NOMINAL_SMS off CUDA, e.g. the CPU interpreter)."""
    if device.type != "cuda":
        return NOMINAL_SMS
    return torch.cuda.get_device_properties(device).multi_processor_count


def _choose_splits(batch_kv_heads: int, s_max: int, block_n: int, sms: int) -> int:
    """Splits per sequence from shapes alone: about PROGRAMS_PER_SM programs per SM in pass 1,
    1 when B * HKV already reaches that, and at least MIN_TILES_PER_SPLIT tiles per split of an
    S_MAX-long sequence."""
    target = PROGRAMS_PER_SM * sms
    if batch_kv_heads >= target:
        return 1
    cap = max(1, triton.cdiv(s_max, block_n) // MIN_TILES_PER_SPLIT)
    return max(1, min(triton.cdiv(target, batch_kv_heads), cap))


def decode_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    seq_lens: torch.Tensor,
    *,
    BLOCK_N: int = 64,
    NUM_SPLITS: int | None = None,
    num_warps: int = 4,
    num_stages: int = 2,
) -> torch.Tensor:
    """q [B, H, D]; k_cache, v_cache [B, HKV, S_MAX, D] (any strides); seq_lens int32/int64 [B]
    with 1 <= seq_lens[b] <= S_MAX -> o [B, H, D] in q's dtype. NUM_SPLITS None: chosen from
    the shapes (see the module docstring)."""
    assert q.dim() == 3 and k_cache.dim() == 4, "expected q [B, H, D], caches [B, HKV, S_MAX, D]"
    B, H, D = q.shape
    _, HKV, S_MAX, _ = k_cache.shape
    assert tuple(k_cache.shape) == (B, HKV, S_MAX, D), "k_cache must be [B, HKV, S_MAX, D]"
    assert v_cache.shape == k_cache.shape, "v_cache must match k_cache"
    assert HKV > 0 and H % HKV == 0, "H must be a multiple of the KV head count (GQA)"
    assert q.dtype == k_cache.dtype == v_cache.dtype, "q and the caches must share one dtype"
    assert seq_lens.shape == (B,) and not seq_lens.is_floating_point(), "seq_lens: ints [B]"
    assert BLOCK_N >= 16 and BLOCK_N & (BLOCK_N - 1) == 0, "BLOCK_N: a power of two >= 16"
    o = torch.empty((B, H, D), device=q.device, dtype=q.dtype)
    if B == 0 or H == 0 or D == 0:
        return o
    G = H // HKV
    if NUM_SPLITS is None:
        NUM_SPLITS = _choose_splits(B * HKV, S_MAX, BLOCK_N, _sm_count(q.device))
    assert NUM_SPLITS >= 1, "NUM_SPLITS must be >= 1"
    if NUM_SPLITS > 1:
        rows = B * H * NUM_SPLITS
        part_o = torch.empty((rows, D), device=q.device, dtype=torch.float32)
        part_m = torch.empty((rows,), device=q.device, dtype=torch.float32)
        part_l = torch.empty((rows,), device=q.device, dtype=torch.float32)
    else:
        part_o = part_m = part_l = o  # not touched by the single-split path
    BLOCK_D = max(16, triton.next_power_of_2(D))
    _decode_split_kernel[(B, HKV, NUM_SPLITS)](
        q,
        k_cache,
        v_cache,
        seq_lens,
        o,
        part_o,
        part_m,
        part_l,
        LOG2E / math.sqrt(D),
        H,
        S_MAX,
        *q.stride(),
        *k_cache.stride(),
        *v_cache.stride(),
        *o.stride(),
        NUM_SPLITS=NUM_SPLITS,
        G=G,
        BLOCK_G=max(16, triton.next_power_of_2(G)),
        BLOCK_N=BLOCK_N,
        D=D,
        BLOCK_D=BLOCK_D,
        PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
        num_warps=num_warps,
        num_stages=num_stages,
    )
    if NUM_SPLITS > 1:
        _decode_merge_kernel[(B, H)](
            part_o,
            part_m,
            part_l,
            o,
            H,
            *o.stride(),
            NUM_SPLITS=NUM_SPLITS,
            BLOCK_S=triton.next_power_of_2(NUM_SPLITS),
            D=D,
            BLOCK_D=BLOCK_D,
            num_warps=4,
        )
    return o


def attn_decode(q, k_cache, v_cache, seq_lens, BLOCK_N=64, NUM_SPLITS=32, num_warps=4, num_stages=2):
    """The task's entry point, delegating to the reference launcher decode_attention."""
    return decode_attention(q, k_cache, v_cache, seq_lens, BLOCK_N=BLOCK_N, NUM_SPLITS=NUM_SPLITS, num_warps=num_warps, num_stages=num_stages)
