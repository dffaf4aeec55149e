"""Rotary embedding (NeoX rotate-half) on q and k in one launch: one program per token.

Op: for token t at position p = positions[t], c/s = cos/sin row p of an fp32 [P, D] cache
(cos in the first D/2 columns, sin in the last), every head x of q[t] and k[t] becomes
    [x1 * c - x2 * s | x2 * c + x1 * s],   x1 = x[:D/2], x2 = x[D/2:].
Traffic: q and k are read and written once (2 * T * (HQ + HKV) * D * elem) plus one cache row
(D * 4 bytes) per token -- bandwidth-bound. The cache row is loaded once per token and reused
for all HQ + HKV heads, which is the point of doing q and k in the same program.
Tiling: program t loads its position, the cos and sin halves of the cache row ([BLOCK_HALF],
masked when D/2 is not a power of two), then walks the heads of q and then of k in
[BLOCK_H, BLOCK_HALF] tiles: each tile is two coalesced loads (first and second half of each
head), fp32 math, two stores. Head counts that are not a power of two (Qwen2: 28) are masked.
Token and cache-row offsets are int64.
Tunables: BLOCK_H (power of two, 4-32 heads per tile), num_warps (2-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "rotary_embedding",
    "category": "fusion",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["one_program_per_token", "gather_by_position", "reuse_cache_row_across_heads",
                   "q_and_k_in_one_launch", "tail_mask", "int64_offsets", "fp32_compute"],
    "tunables": {"BLOCK_H": [4, 8, 16, 32], "num_warps": [2, 4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"rope_neox_qk_bf16": 0.4369, "rope_neox_qk_fp16": 0.4375, "rope_neox_qk_fp32": 0.4594, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _rotate_heads(x_ptr, o_ptr, row, stride_t, stride_h, H, HALF, cos, sin, BLOCK_H: tl.constexpr,
                  BLOCK_HALF: tl.constexpr):
    # rotate BLOCK_H heads of one token at a time, each as two halves [0, D/2) and [D/2, D) (NeoX
    # layout: element i pairs with i + D/2, not with its neighbour)
    heads = tl.arange(0, BLOCK_H)
    cols = tl.arange(0, BLOCK_HALF)
    base = row * stride_t
    for h0 in range(0, H, BLOCK_H):
        hh = h0 + heads
        # heads past H and columns past D/2 (BLOCK_HALF is a power of two) are masked
        mask = (hh[:, None] < H) & (cols[None, :] < HALF)
        offs = base + hh[:, None] * stride_h + cols[None, :]
        x1 = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(x_ptr + offs + HALF, mask=mask, other=0.0).to(tl.float32)
        # the 2-D rotation of each pair (x1, x2) by the position's angle, in fp32
        o1 = x1 * cos[None, :] - x2 * sin[None, :]
        o2 = x2 * cos[None, :] + x1 * sin[None, :]
        tl.store(o_ptr + offs, o1.to(o_ptr.dtype.element_ty), mask=mask)
        tl.store(o_ptr + offs + HALF, o2.to(o_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rope_neox_kernel(pos_ptr, q_ptr, k_ptr, cache_ptr, qo_ptr, ko_ptr, HQ, HKV, HALF, stride_qt, stride_qh,
                      stride_kt, stride_kh, stride_c, BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    # one program per token: its position's cos/sin row is loaded once and used for every q head
    # and every k head
    t = tl.program_id(0).to(tl.int64)
    pos = tl.load(pos_ptr + t).to(tl.int64)
    cols = tl.arange(0, BLOCK_HALF)
    cmask = cols < HALF
    # cache row layout: [cos(0..D/2), sin(0..D/2)] in fp32
    cos = tl.load(cache_ptr + pos * stride_c + cols, mask=cmask, other=0.0)
    sin = tl.load(cache_ptr + pos * stride_c + HALF + cols, mask=cmask, other=0.0)
    _rotate_heads(q_ptr, qo_ptr, t, stride_qt, stride_qh, HQ, HALF, cos, sin, BLOCK_H, BLOCK_HALF)
    _rotate_heads(k_ptr, ko_ptr, t, stride_kt, stride_kh, HKV, HALF, cos, sin, BLOCK_H, BLOCK_HALF)


def rope_neox_qk(positions: torch.Tensor, q: torch.Tensor, k: torch.Tensor, cos_sin_cache: torch.Tensor,
                 BLOCK_H: int = 8, num_warps: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    assert q.dim() == 3 and k.dim() == 3 and q.shape[0] == k.shape[0] and q.shape[2] == k.shape[2]
    T, HQ, D = q.shape
    HKV = k.shape[1]
    assert D % 2 == 0 and cos_sin_cache.shape[1] == D and cos_sin_cache.dtype == torch.float32
    q = q.contiguous()
    k = k.contiguous()
    cache = cos_sin_cache.contiguous()
    q_out = torch.empty_like(q)
    k_out = torch.empty_like(k)
    half = D // 2
    block_h = min(BLOCK_H, triton.next_power_of_2(max(HQ, HKV)))
    _rope_neox_kernel[(T,)](positions.contiguous(), q, k, cache, q_out, k_out, HQ, HKV, half, q.stride(0),
                            q.stride(1), k.stride(0), k.stride(1), cache.stride(0), BLOCK_H=block_h,
                            BLOCK_HALF=triton.next_power_of_2(half), num_warps=num_warps)
    return q_out, k_out
