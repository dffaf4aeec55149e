"""Rotary position embedding, rotate-half (GPT-NeoX) layout, on query and key heads in one launch.

Op: every head vector x (length D, even; H = D / 2) of token t is rotated by the angles stored in
row positions[t] of an fp32 cache [P, D] laid out as [cos_0 .. cos_{H-1} | sin_0 .. sin_{H-1}].
Element j < H pairs with element j + H (lo = x[:H], hi = x[H:]):
    out[:H] = lo * cos - hi * sin        out[H:] = hi * cos + lo * sin
for every head of q [T, HQ, D] and of k [T, HKV, D] (grouped-query attention: HKV <= HQ). Math in
fp32, rounded once to the input dtype; q and k are left untouched and new tensors returned. The
GPT-J "interleaved" layout pairs x[2i] with x[2i + 1] instead; only the load offsets differ.
Traffic: q and k read and written once, 2 * T * (HQ + HKV) * D * elem, plus the positions and, per
token, D fp32 cache values (4 * D bytes). A memory-bound op at about 1.5 FLOP per byte: the goal
is one pass, each cache row fetched once per token, not per head.
Tiling: grid (T, cdiv(HQ, BLOCK_H) + cdiv(HKV, BLOCK_H)). The first axis is one token: its
position is loaded as a scalar and its cos and sin halves once, as [HALF_BLOCK] vectors kept in
registers. The second axis walks head blocks, q's first and then k's, so a single launch covers
both tensors and a decode step (T of tens) still has T * head-blocks programs to spread. A program
rotates a [BLOCK_H, HALF_BLOCK] tile of heads: two half-row loads, four multiplies, two stores,
cos and sin broadcast along the head axis. Head counts and D that are not powers of two (28 heads,
D = 24) are handled by masks; HALF_BLOCK is next_power_of_2(D / 2).
int64 offsets: the token index and the gathered position are cast to int64 before they multiply a
stride: 8192 tokens x 64 heads x 128 is 6.7e7 elements per tensor, and longer prefills or a
32k-position cache with wider rows reach 2^31, where an int32 offset wraps silently.
Positions repeat and come in any order (a decode batch mixes sequences), so the cache access is a
gather by position, not a slice; positions outside [0, P) read out of bounds: validate upstream.
Tunables: BLOCK_H (heads per program, a power of two from 1 to 16; larger for small D, smaller for
short prefills that need more programs), num_warps (1-8; 4 suits a [8, 64] tile).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "rope",
    "category": "fusion",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": [
        "rotary_position_embedding",
        "rotate_half_neox",
        "cos_sin_cache_gather",
        "fp32_math_single_rounding",
        "int64_offsets",
        "fused_q_k_launch",
        "2d_grid_token_by_head_block",
    ],
    "tunables": {"BLOCK_H": [1, 2, 4, 8, 16], "num_warps": [1, 2, 4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"8192 tokens HQ32 HKV8 D128 bf16": 0.617, "source": "docs/results/templates_h200_2026-12-02.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-12-02)"},
    "template": True,
}


@triton.jit
def _rope_tile(
    x_ptr,
    o_ptr,
    t,
    h0,
    n_heads,
    stride_xt,
    stride_xh,
    stride_ot,
    stride_oh,
    cos,
    sin,
    HALF,
    BLOCK_H: tl.constexpr,
    HALF_BLOCK: tl.constexpr,
):
    heads = h0 + tl.arange(0, BLOCK_H)
    i = tl.arange(0, HALF_BLOCK)
    mask = (heads < n_heads)[:, None] & (i < HALF)[None, :]
    src = x_ptr + t * stride_xt + heads.to(tl.int64)[:, None] * stride_xh + i[None, :]
    dst = o_ptr + t * stride_ot + heads.to(tl.int64)[:, None] * stride_oh + i[None, :]
    lo = tl.load(src, mask=mask, other=0.0).to(tl.float32)
    hi = tl.load(src + HALF, mask=mask, other=0.0).to(tl.float32)
    c = cos[None, :]
    s = sin[None, :]
    out_ty = o_ptr.dtype.element_ty  # rounded once, from fp32
    tl.store(dst, (lo * c - hi * s).to(out_ty), mask=mask)
    tl.store(dst + HALF, (hi * c + lo * s).to(out_ty), mask=mask)


@triton.jit
def _rotary_half_kernel(
    positions_ptr,
    q_ptr,
    k_ptr,
    cache_ptr,
    qo_ptr,
    ko_ptr,
    HQ,
    HKV,
    HALF,
    stride_qt,
    stride_qh,
    stride_kt,
    stride_kh,
    stride_qot,
    stride_qoh,
    stride_kot,
    stride_koh,
    stride_cache,
    Q_BLOCKS,
    BLOCK_H: tl.constexpr,
    HALF_BLOCK: tl.constexpr,
):
    t = tl.program_id(0).to(tl.int64)
    hb = tl.program_id(1)
    # the token's cache row, gathered by its position: cos in the first half, sin in the second
    p = tl.load(positions_ptr + t).to(tl.int64)
    i = tl.arange(0, HALF_BLOCK)
    row = cache_ptr + p * stride_cache
    cos = tl.load(row + i, mask=i < HALF, other=0.0).to(tl.float32)
    sin = tl.load(row + HALF + i, mask=i < HALF, other=0.0).to(tl.float32)
    if hb < Q_BLOCKS:
        _rope_tile(
            q_ptr, qo_ptr, t, hb * BLOCK_H, HQ, stride_qt, stride_qh, stride_qot, stride_qoh,
            cos, sin, HALF, BLOCK_H, HALF_BLOCK,
        )  # fmt: skip
    else:
        _rope_tile(
            k_ptr, ko_ptr, t, (hb - Q_BLOCKS) * BLOCK_H, HKV, stride_kt, stride_kh, stride_kot,
            stride_koh, cos, sin, HALF, BLOCK_H, HALF_BLOCK,
        )  # fmt: skip


def rotary_half(
    positions: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    cos_sin_cache: torch.Tensor,
    BLOCK_H: int = 4,
    num_warps: int = 4,
) -> tuple[torch.Tensor, torch.Tensor]:
    """positions int [T]; q [T, HQ, D], k [T, HKV, D]; cos_sin_cache [P, D] (cos | sin halves).
    Returns (q_out, k_out), new tensors of q's and k's shapes and dtypes."""
    assert q.ndim == 3 == k.ndim, f"q and k must be [T, heads, D], got {q.shape} and {k.shape}"
    T, HQ, D = q.shape
    assert k.shape[0] == T and k.shape[2] == D, f"k {tuple(k.shape)} does not match q {q.shape}"
    assert D % 2 == 0, f"head dim must be even, got {D}"
    assert positions.shape == (T,), f"positions must be [T={T}], got {tuple(positions.shape)}"
    assert cos_sin_cache.ndim == 2 and cos_sin_cache.shape[-1] == D, "the cache must be [P, D]"
    assert q.stride(2) == 1 and k.stride(2) == 1 and cos_sin_cache.stride(1) == 1
    HKV = k.shape[1]
    q_out = q.new_empty(q.shape)  # contiguous, whatever q's strides
    k_out = k.new_empty(k.shape)
    if T == 0:
        return q_out, k_out
    half = D // 2
    q_blocks = triton.cdiv(HQ, BLOCK_H)
    grid = (T, q_blocks + triton.cdiv(HKV, BLOCK_H))
    _rotary_half_kernel[grid](
        positions,
        q,
        k,
        cos_sin_cache,
        q_out,
        k_out,
        HQ,
        HKV,
        half,
        q.stride(0),
        q.stride(1),
        k.stride(0),
        k.stride(1),
        q_out.stride(0),
        q_out.stride(1),
        k_out.stride(0),
        k_out.stride(1),
        cos_sin_cache.stride(0),
        q_blocks,
        BLOCK_H=BLOCK_H,
        HALF_BLOCK=triton.next_power_of_2(half),
        num_warps=num_warps,
    )
    return q_out, k_out


def rope_neox_qk(positions, q, k, cos_sin_cache, BLOCK_H=4, num_warps=4):
    """The task's entry point, delegating to the reference launcher rotary_half."""
    return rotary_half(positions, q, k, cos_sin_cache, BLOCK_H=BLOCK_H, num_warps=num_warps)
