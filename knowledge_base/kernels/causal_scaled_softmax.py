"""Scale + causal mask + softmax over attention scores: one program per query row.

Op: p[b, i, :] = softmax(s[b, i, :] * scale) over the keys j <= i + (SK - SQ); zeros after them.
Traffic: only the visible scores are read (the masked upper triangle is never loaded: about half
the input of a square prefill), every probability is written once, zeros included:
(visible + BH * SQ * SK) * elem bytes. Bandwidth-bound.
Tiling: one program per (batch*head, query) row. `limit = i + SK - SQ + 1` visible keys. When the
row fits one BLOCK_N tile (SK <= 4096 with the default: every task shape), the visible part is
loaded once, max / exp / sum are done in registers and the row is stored in one go; longer rows
use the online (max, rescaled sum) recurrence over the visible chunks, then a second pass that
writes p (recomputing exp from a cache-hot reload) and zeros for the masked tail. The scale is
folded into the exponent: exp(scale * (s - max s)) computed as exp2 with scale * log2(e)
(scale > 0, so the max commutes with it). Row offsets are int64 (BH * SQ * SK passes 2^31).
Tunables: BLOCK_N (power of two; >= SK for the one-tile path), num_warps (4-16; on H200 bf16 4 beat
8 by 20-60% for rows of 1000-4093).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "masked_softmax",
    "category": "fusion",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["one_program_per_row", "row_in_registers", "online_softmax", "skip_masked_loads",
                   "causal_offset_mask", "scale_folded_into_exp2", "fp32_accumulation", "int64_offsets"],
    "tunables": {"BLOCK_N": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"causal_scaled_softmax_bf16": 0.6984, "causal_scaled_softmax_fp16": 0.6917, "causal_scaled_softmax_fp32": 0.9073, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}

SCALE = 128 ** -0.5
LOG2E = 1.4426950408889634


@triton.jit
def _causal_softmax_kernel(s_ptr, p_ptr, SQ, SK, qk_scale, BLOCK_N: tl.constexpr, ONE_TILE: tl.constexpr):
    # one program per row of scores [BH * SQ, SK]; i is the query's position within its head
    row = tl.program_id(0)
    i = row % SQ
    # bottom-right-aligned causal mask (queries are the last SQ of SK positions): query i sees keys
    # 0 .. i + SK - SQ
    limit = i + SK - SQ + 1  # number of visible keys, >= 1
    base = row.to(tl.int64) * SK
    s_row = s_ptr + base
    p_row = p_ptr + base
    offs = tl.arange(0, BLOCK_N)
    dtype = p_ptr.dtype.element_ty

    if ONE_TILE:
        # masked keys load -inf and get probability 0; keys past limit are never read, but are
        # still stored as 0
        vis = offs < limit
        s = tl.load(s_row + offs, mask=vis, other=float("-inf")).to(tl.float32)
        m = tl.max(s, axis=0)
        # qk_scale = scale * log2(e): softmax(scale * s) computed with exp2. The max is taken on
        # unscaled s, which is fine since scale > 0
        e = tl.where(vis, tl.exp2((s - m) * qk_scale), 0.0)
        p = e / tl.sum(e, axis=0)
        tl.store(p_row + offs, p.to(dtype), mask=offs < SK)
    else:
        # online softmax over the visible keys: per-lane running max and rescaled sum, fp32
        m_run = tl.full([BLOCK_N], float("-inf"), tl.float32)
        l_run = tl.zeros([BLOCK_N], tl.float32)
        for start in range(0, limit, BLOCK_N):
            cols = start + offs
            s = tl.load(s_row + cols, mask=cols < limit, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m_run, s)
            alpha = tl.where(m_new == float("-inf"), 0.0, tl.exp2((m_run - m_new) * qk_scale))
            l_run = l_run * alpha + tl.where(s == float("-inf"), 0.0, tl.exp2((s - m_new) * qk_scale))
            m_run = m_new
        m = tl.max(m_run, axis=0)
        # combine the lanes at the row max; lanes that saw only -inf weigh 0
        l_sum = tl.sum(tl.where(m_run == float("-inf"), 0.0, l_run * tl.exp2((m_run - m) * qk_scale)), axis=0)
        inv = 1.0 / l_sum
        # second pass covers the whole row so the masked tail is written as zeros
        for start in range(0, SK, BLOCK_N):
            cols = start + offs
            vis = cols < limit
            s = tl.load(s_row + cols, mask=vis, other=float("-inf")).to(tl.float32)
            p = tl.where(vis, tl.exp2((s - m) * qk_scale) * inv, 0.0)
            tl.store(p_row + cols, p.to(dtype), mask=cols < SK)


def causal_scaled_softmax(s: torch.Tensor, BLOCK_N: int = 4096, num_warps: int = 4) -> torch.Tensor:
    assert s.dim() == 3 and s.shape[2] >= s.shape[1]
    s = s.contiguous()
    BH, SQ, SK = s.shape
    p = torch.empty_like(s)
    block = min(BLOCK_N, triton.next_power_of_2(SK))
    _causal_softmax_kernel[(BH * SQ,)](s, p, SQ, SK, SCALE * LOG2E, BLOCK_N=block, ONE_TILE=SK <= block,
                                       num_warps=num_warps)
    return p
