"""Global average pool NCHW -> [B, C, 1, 1]: a row-mean over contiguous planes, several planes per program.

Op: y[b, c] = mean of the H * W plane x[b, c]; each plane is one contiguous run.
Traffic: x read once, B * C outputs written: bandwidth-bound at batch sizes of training; a
batch-1 ResNet head (100K elements) is launch-bound.
Tiling: the planes are rows of a [B * C, H * W] view. A program owns ROWS rows and walks them in
[ROWS, BLOCK_L] tiles (each row segment a coalesced run; the column tail masked) with an fp32
accumulator. ROWS * BLOCK_L is kept near 4096: 64 rows x 64 for ResNet's 7x7 = 49-element planes
(a program per plane would waste most lanes and launch 500K programs), 1 row x 4096 for the
12544-element planes of an early squeeze-excitation block. Row offsets int64.
Tunables: TILE (elements per tile, 2048-8192), BLOCK_L cap (power of two, 512-4096), num_warps.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "row_reduction",
    "category": "pooling",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["rows_per_program", "chunked_row_loop", "tail_mask", "fp32_accumulation", "int64_offsets"],
    "tunables": {"TILE": [2048, 4096, 8192], "MAX_BLOCK_L": [512, 1024, 2048, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"global_avg_pool_bf16": 0.2254, "global_avg_pool_fp16": 0.2175, "global_avg_pool_fp32": 0.419, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _global_avg_pool_kernel(x_ptr, y_ptr, R, L, inv_l, ROWS: tl.constexpr, BLOCK_L: tl.constexpr):
    # x viewed as [B * C, H * W]: each program averages ROWS planes at once, with ROWS * BLOCK_L
    # about TILE elements, so small planes (7 x 7) still give a program a full tile of work
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < R
    base = rows.to(tl.int64)[:, None] * L
    offs = tl.arange(0, BLOCK_L)
    # 2-D fp32 accumulator: summed elementwise over the loop, reduced along the plane once at the
    # end
    acc = tl.zeros([ROWS, BLOCK_L], tl.float32)
    for start in range(0, L, BLOCK_L):
        cols = start + offs
        mask = row_ok[:, None] & (cols[None, :] < L)
        acc += tl.load(x_ptr + base + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    # multiply by 1/L (computed on the host) instead of dividing
    mean = tl.sum(acc, axis=1) * inv_l
    tl.store(y_ptr + rows, mean.to(y_ptr.dtype.element_ty), mask=row_ok)


def global_avg_pool(x: torch.Tensor, TILE: int = 4096, MAX_BLOCK_L: int = 2048, num_warps: int = 4) -> torch.Tensor:
    assert x.dim() == 4
    x = x.contiguous()
    B, C, H, W = x.shape
    R, L = B * C, H * W
    y = torch.empty((B, C, 1, 1), dtype=x.dtype, device=x.device)
    block_l = min(MAX_BLOCK_L, triton.next_power_of_2(L))
    rows = max(1, TILE // block_l)
    _global_avg_pool_kernel[(triton.cdiv(R, rows),)](x, y, R, L, 1.0 / L, ROWS=rows, BLOCK_L=block_l,
                                                     num_warps=num_warps)
    return y
