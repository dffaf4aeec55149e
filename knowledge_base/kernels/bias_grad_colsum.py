"""Column sum db[j] = sum_i dy[i, j] (Linear bias gradient): split-M partial sums, then a fixed-order combine.

Op: reduce a row-major dy[M, N] over its leading dimension; output [N] in dy's dtype.
Traffic: dy read once (M * N * elem) and db written once: bandwidth-bound.
Tiling: the kept dimension N is the contiguous one, so each program owns BLOCK_N adjacent columns
and walks rows in BLOCK_M x BLOCK_N tiles (every row segment is one coalesced load), keeping a
[BLOCK_M, BLOCK_N] fp32 accumulator that is collapsed over rows at the end. N / BLOCK_N column
blocks alone are too few programs to fill an H200 (4608 / 128 = 36), so M is also split into
SPLIT slabs: kernel 1 writes fp32 partials [SPLIT, N], kernel 2 adds the SPLIT partials of each
column in a fixed order and rounds once. No atomics: bitwise reproducible. Row offsets int64.
Tunables: BLOCK_M (8-64), BLOCK_N (power of two, 64-256), target program count (SPLIT), num_warps.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "column_reduction",
    "category": "reduce",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["column_block_per_program", "split_reduction_dimension", "two_stage_deterministic_reduction",
                   "fp32_accumulation", "tail_mask", "int64_offsets"],
    "tunables": {"BLOCK_M": [8, 16, 32, 64], "BLOCK_N": [64, 128, 256], "TARGET_PROGRAMS": [256, 512, 1024],
                 "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"bias_grad_colsum_bf16": 0.5484, "bias_grad_colsum_fp16": 0.4696, "bias_grad_colsum_fp32": 0.5226, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _colsum_partial_kernel(dy_ptr, part_ptr, M, N, rows_per_split, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # bias gradient = column sums of dy [M, N]. Axis 0: a BLOCK_N strip of columns; axis 1: a slab
    # of rows_per_split rows, so a tall dy with few columns still gets enough programs
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    split = tl.program_id(1)
    col_ok = cols < N
    row0 = split * rows_per_split
    row_end = tl.minimum(row0 + rows_per_split, M)
    offs_m = tl.arange(0, BLOCK_M)
    # 2-D fp32 accumulator: tiles are added elementwise in the loop, and the BLOCK_M rows are
    # folded only once at the end
    acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for start in range(row0, row_end, BLOCK_M):
        rows = start + offs_m
        # mask against this slab's end (the last slab may be short) and the column edge
        mask = (rows[:, None] < row_end) & col_ok[None, :]
        ptrs = dy_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]
        acc += tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    # one fp32 partial row per slab; the combine kernel adds the slabs in a fixed order, not with
    # atomics, so every run gives the same bits
    tl.store(part_ptr + split.to(tl.int64) * N + cols, tl.sum(acc, axis=0), mask=col_ok)


@triton.jit
def _colsum_combine_kernel(part_ptr, out_ptr, N, SPLIT, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    acc = tl.zeros([BLOCK_N], tl.float32)
    for s in range(0, SPLIT):
        acc += tl.load(part_ptr + s * N + cols, mask=col_ok, other=0.0)
    tl.store(out_ptr + cols, acc.to(out_ptr.dtype.element_ty), mask=col_ok)


def bias_grad_colsum(dy: torch.Tensor, BLOCK_M: int = 32, BLOCK_N: int = 128, TARGET_PROGRAMS: int = 512,
                     num_warps: int = 4) -> torch.Tensor:
    assert dy.dim() == 2
    dy = dy.contiguous()
    M, N = dy.shape
    block_n = min(BLOCK_N, triton.next_power_of_2(N))
    col_blocks = triton.cdiv(N, block_n)
    # enough M-slabs to give the GPU ~TARGET_PROGRAMS programs, each slab a whole number of tiles
    split = max(1, min(triton.cdiv(M, BLOCK_M), TARGET_PROGRAMS // col_blocks))
    rows_per_split = triton.cdiv(triton.cdiv(M, split), BLOCK_M) * BLOCK_M
    # recount after rounding each slab up to whole BLOCK_M tiles: no slab is empty
    split = triton.cdiv(M, rows_per_split)
    partial = torch.empty((split, N), dtype=torch.float32, device=dy.device)
    out = torch.empty((N,), dtype=dy.dtype, device=dy.device)
    _colsum_partial_kernel[(col_blocks, split)](dy, partial, M, N, rows_per_split, BLOCK_M=BLOCK_M,
                                                BLOCK_N=block_n, num_warps=num_warps)
    _colsum_combine_kernel[(col_blocks,)](partial, out, N, split, BLOCK_N=block_n, num_warps=4)
    return out
