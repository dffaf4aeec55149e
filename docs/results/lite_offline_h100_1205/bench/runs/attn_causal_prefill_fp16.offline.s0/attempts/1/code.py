"""Flash-attention forward: tiled scaled-dot-product attention, causal or not, grouped KV heads.

Op: for q[B, H, S, D] and k, v[B, HKV, S, D] (H a multiple of HKV; query head h reads KV head
h // (H // HKV)), o[b, h, i] = sum_j softmax_j(scale * q[b, h, i] . k[b, kv, j]) v[b, kv, j],
with keys j > i excluded when causal; scale = 1 / sqrt(D) unless given. fp32 statistics and
accumulator, output in q's dtype. The S x S score matrix is never written to memory.
Traffic: minimal (2 * B * H + 2 * B * HKV) * S * D * elem (q, o, k, v once). FLOPs 4 * B * H *
S^2 * D (half that when causal), so for S in the thousands the op is compute-bound: each query
tile of BLOCK_M rows re-reads K and V once per tile, and that re-read comes from L2, because the
grid's second axis walks heads in order and the G = H / HKV query heads sharing a KV head run
side by side.
Tiling: program (query tile, b * H + h) keeps its BLOCK_M x D slice of q in registers and streams
BLOCK_N x D tiles of K and V: s = q k^T (tl.dot, fp32), then the online-softmax update -- the
running row max m grows to m' = max(m, rowmax(s)), the running sum l and the fp32 accumulator
are rescaled by exp(m - m') before p = exp(s - m') is added (l += rowsum(p), acc += p v, the
second tl.dot, with p rounded to v's dtype). One division by l at the end. Scores are kept in
the log2 domain (scale * log2(e) folded in, exp2 on the hardware's fast path).
Causal: key tiles entirely past the query tile are never loaded (the loop stops at the tile's
last row); tiles entirely before its first row need no mask and take an unmasked loop; only the
tiles that overlap the diagonal (and the key tail past S) are masked. Query tiles are launched
longest-first (the last tile has the most key tiles) so the short ones fill in at the end.
Any S: the query tail loads zeros and is not stored; the key tail is masked to -inf. Every row
sees key 0 in its first tile, so the running max is finite after one tile and no 0/0 occurs.
fp32 inputs use input_precision="ieee" (tl.dot would otherwise round fp32 to tf32 on tensor cores).
Tunables: BLOCK_M (64-128; 128 for fp16/bf16 with D = 128), BLOCK_N (32-128, 64 typical),
num_warps (4-8; 8 with BLOCK_M = 128), num_stages (2-4: software pipelining of the K/V loads;
fp32 with D = 128 needs the smaller tiles to fit shared memory). Head dim: a power of two in
16..128 (tl.dot needs >= 16 on the K side; the register tile grows with D).
"""

import math

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "attention",
    "category": "attention",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": [
        "flash_attention",
        "online_softmax",
        "tensor_cores",
        "causal_block_skipping",
        "gqa_grouping",
        "exp2_log2_domain",
        "fp32_accumulation",
        "masking",
        "longest_first_schedule",
        "prefill_shapes",
    ],
    "tunables": {
        "BLOCK_M": [64, 128],
        "BLOCK_N": [32, 64, 128],
        "num_warps": [4, 8],
        "num_stages": [2, 3, 4],
    },
    "verified_on": ["NVIDIA H200"],
    "attainment": {"B2 H32 HKV8 S4096 D128 causal bf16": 0.4274, "B4 H28 HKV4 S1000 D128 causal bf16": 0.2538, "source": "docs/results/templates_h200_2026-12-02.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-12-02)"},
    "template": True,
}

LOG2E = 1.4426950408889634


@triton.jit
def _flash_tiles(
    acc,
    m_i,
    l_i,
    q,
    k_base,
    v_base,
    rows,
    cols,
    dims,
    lo,
    hi,
    S,
    stride_ks,
    stride_vs,
    qk_scale,
    MASKED: tl.constexpr,
    CAUSAL: tl.constexpr,
    BLOCK_N: tl.constexpr,
    PRECISION: tl.constexpr,
):
    # key tiles [lo, hi) of one query tile; MASKED tiles may hold keys past S or (CAUSAL) past a row
    for start in range(lo, hi, BLOCK_N):
        keys = start + cols
        # K is read already transposed ([D, BLOCK_N]): the first product is q @ kt as it stands
        kt_ptrs = k_base + keys[None, :] * stride_ks + dims[:, None]
        v_ptrs = v_base + keys[:, None] * stride_vs + dims[None, :]
        if MASKED:
            key_ok = keys < S
            kt = tl.load(kt_ptrs, mask=key_ok[None, :], other=0.0)
        else:
            kt = tl.load(kt_ptrs)
        s = tl.dot(q, kt, input_precision=PRECISION) * qk_scale  # [BLOCK_M, BLOCK_N], log2 units
        if MASKED:
            keep = key_ok[None, :]
            if CAUSAL:
                keep = keep & (keys[None, :] <= rows[:, None])
            s = tl.where(keep, s, float("-inf"))
        # online softmax: raise the running max, rescale what was summed under the old one
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp2(m_i - m_new)  # exp2(-inf) = 0 on the first tile
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        if MASKED:
            v = tl.load(v_ptrs, mask=key_ok[:, None], other=0.0)
        else:
            v = tl.load(v_ptrs)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
        m_i = m_new
    return acc, m_i, l_i


@triton.jit
def _flash_attention_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    qk_scale,
    S,
    H,
    GROUP,
    stride_qb,
    stride_qh,
    stride_qs,
    stride_kb,
    stride_kh,
    stride_ks,
    stride_vb,
    stride_vh,
    stride_vs,
    stride_ob,
    stride_oh,
    stride_os,
    CAUSAL: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    D: tl.constexpr,
    PRECISION: tl.constexpr,
):
    # longest-first: with a causal mask the last query tile has the most key tiles to visit
    if CAUSAL:
        tile = tl.num_programs(0) - 1 - tl.program_id(0)
    else:
        tile = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = bh % H
    kv = (h // GROUP).to(tl.int64)
    h = h.to(tl.int64)

    row0 = tile * BLOCK_M
    rows = row0 + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, D)
    row_ok = rows < S

    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb + kv * stride_kh
    v_base = v_ptr + b * stride_vb + kv * stride_vh
    q = tl.load(q_base + rows[:, None] * stride_qs + dims[None, :], mask=row_ok[:, None], other=0.0)

    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, D), tl.float32)

    if CAUSAL:
        # key tiles wholly before this query tile's first row: every key is valid for every row
        full_end = (row0 // BLOCK_N) * BLOCK_N
        # the rest up to the last row (or S): overlaps the diagonal, masked; later tiles never load
        last = tl.minimum(row0 + BLOCK_M, S)
    else:
        full_end = (S // BLOCK_N) * BLOCK_N
        last = S
    acc, m_i, l_i = _flash_tiles(
        acc, m_i, l_i, q, k_base, v_base, rows, cols, dims, 0, full_end, S, stride_ks,
        stride_vs, qk_scale, False, CAUSAL, BLOCK_N, PRECISION,
    )  # fmt: skip
    acc, m_i, l_i = _flash_tiles(
        acc, m_i, l_i, q, k_base, v_base, rows, cols, dims, full_end, last, S, stride_ks,
        stride_vs, qk_scale, True, CAUSAL, BLOCK_N, PRECISION,
    )  # fmt: skip

    out = acc / l_i[:, None]  # l_i >= 1: the row's max term contributes exp2(0)
    o_base = o_ptr + b * stride_ob + h * stride_oh
    tl.store(
        o_base + rows[:, None] * stride_os + dims[None, :],
        out.to(o_ptr.dtype.element_ty),
        mask=row_ok[:, None],
    )


def flash_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = True,
    scale: float | None = None,
    BLOCK_M: int = 64,
    BLOCK_N: int = 64,
    num_warps: int = 4,
    num_stages: int = 2,
) -> torch.Tensor:
    """q [B, H, S, D]; k, v [B, HKV, S, D] with H % HKV == 0 -> o [B, H, S, D] in q's dtype."""
    assert q.dim() == 4 and k.dim() == 4 and v.shape == k.shape, (
        "expected q [B, H, S, D] and k, v [B, HKV, S, D]"
    )
    B, H, S, D = q.shape
    assert k.shape[0] == B and k.shape[2] == S and k.shape[3] == D, "k/v must match q in B, S, D"
    HKV = k.shape[1]
    assert HKV > 0 and H % HKV == 0, "H must be a multiple of the KV head count (GQA)"
    assert q.dtype == k.dtype == v.dtype, "q, k, v must share one dtype"
    assert 16 <= D <= 128 and D & (D - 1) == 0, "head dim must be a power of two in 16..128"
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    o = torch.empty_like(q)
    if S == 0 or B * H == 0:
        return o
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    _flash_attention_kernel[grid](
        q,
        k,
        v,
        o,
        scale * LOG2E,
        S,
        H,
        H // HKV,
        *q.stride()[:3],
        *k.stride()[:3],
        *v.stride()[:3],
        *o.stride()[:3],
        CAUSAL=causal,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        D=D,
        PRECISION="ieee" if q.dtype == torch.float32 else "tf32",
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return o


def attn_causal_prefill(q, k, v, BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=2):
    """The task's entry point, delegating to the reference launcher flash_attention."""
    return flash_attention(q, k, v, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=num_warps, num_stages=num_stages)
