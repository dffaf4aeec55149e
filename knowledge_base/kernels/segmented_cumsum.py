"""Segmented (per-sequence) cumsum over packed tokens x[T, H] with cu_seqlens: one program per (sequence, head block).

Op: y[t, h] = sum of x[s, h] over cu[b] <= s <= t, for t in sequence b (restarts at each start).
Traffic: one read and one write of every element, 2 * T * H * elem (+ the tiny cu_seqlens):
bandwidth-bound.
Tiling: the scan runs down the token axis, while the contiguous axis is the head axis H. A program
owns one sequence b and BLOCK_H adjacent heads, and walks the sequence's tokens in BLOCK_T x
BLOCK_H tiles (each tile row is one contiguous run of heads; tokens past the sequence end and
heads past H are masked). tl.cumsum along axis 0 scans a tile; an fp32 carry per head (the sum of
the sequence's earlier tiles) shifts it. Sequences never share a program, so the restart is
free. Long and short sequences give uneven program lengths; a smaller BLOCK_H gives more
programs. Row offsets int64.
Tunables: BLOCK_T (power of two, 32-256), BLOCK_H (power of two, 16-128), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "scan",
    "category": "scan",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["varlen_cu_seqlens", "program_per_segment", "column_scan_axis0", "block_scan_plus_carry",
                   "tail_mask", "fp32_accumulation", "int64_offsets"],
    "tunables": {"BLOCK_T": [32, 64, 128, 256], "BLOCK_H": [16, 32, 64, 128], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"segmented_cumsum_bf16": 0.0163, "segmented_cumsum_fp16": 0.0162, "segmented_cumsum_fp32": 0.031, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _segmented_cumsum_kernel(x_ptr, cu_ptr, y_ptr, H, BLOCK_T: tl.constexpr, BLOCK_H: tl.constexpr):
    # axis 0: the segment (a packed sequence, tokens cu_seqlens[b] .. cu_seqlens[b+1]); axis 1: a
    # block of BLOCK_H columns. Each program scans its segment down the token axis, so segments
    # never leak into each other
    b = tl.program_id(0)
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    head_ok = heads < H
    seq_start = tl.load(cu_ptr + b)
    seq_end = tl.load(cu_ptr + b + 1)
    offs_t = tl.arange(0, BLOCK_T)
    # per column, the fp32 sum of the segment's earlier token blocks
    carry = tl.zeros([BLOCK_H], tl.float32)
    for start in range(seq_start, seq_end, BLOCK_T):
        toks = start + offs_t
        # tokens past the segment end (they belong to the next segment) and columns past H are
        # masked
        mask = (toks[:, None] < seq_end) & head_ok[None, :]
        # x is [T, H] row-major: a [BLOCK_T, BLOCK_H] tile, contiguous along the columns
        offs = toks[:, None].to(tl.int64) * H + heads[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=0) + carry[None, :]
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(x, axis=0)


def segmented_cumsum(x: torch.Tensor, cu_seqlens: torch.Tensor, BLOCK_T: int = 64, BLOCK_H: int = 32,
                     num_warps: int = 4) -> torch.Tensor:
    assert x.dim() == 2 and cu_seqlens.dim() == 1
    x = x.contiguous()
    cu_seqlens = cu_seqlens.contiguous()
    T, H = x.shape
    B = cu_seqlens.shape[0] - 1
    y = torch.empty_like(x)
    block_h = min(BLOCK_H, triton.next_power_of_2(H))
    _segmented_cumsum_kernel[(B, triton.cdiv(H, block_h))](x, cu_seqlens, y, H, BLOCK_T=BLOCK_T, BLOCK_H=block_h,
                                                          num_warps=num_warps)
    return y
