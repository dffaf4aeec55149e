"""Gather along the last dimension, out[i, k] = x[i, idx[i, k]]: one flat pass over the outputs.

Op: torch.gather(x, -1, idx) for x[M, N], idx[M, K] (int64); out [M, K] in x's dtype, exact.
Traffic: idx read and out written contiguously (M * K * (8 + elem)); x is read only at the M * K
picked positions, each costing one 32-byte DRAM sector (a random read, not a stream). Tiny for
every realistic shape: latency/launch-bound; what matters is one launch and no wasted passes.
Tiling: a flat 1-D grid over the M * K outputs, BLOCK per program (last block masked): each lane
loads its index, forms the int64 address row * N + idx (row = flat // K), and gathers.
Tunables: BLOCK (power of two, 256-4096), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gather",
    "category": "index",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["flat_1d_grid_over_outputs", "sparse_row_gather", "tail_mask", "int64_offsets"],
    "tunables": {"BLOCK": [256, 1024, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"gather_lastdim_bf16": 0.0028, "gather_lastdim_fp16": 0.0024, "gather_lastdim_fp32": 0.0029, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _gather_lastdim_kernel(x_ptr, idx_ptr, out_ptr, n_out, N, K, BLOCK: tl.constexpr):
    # flat sweep over the M * K outputs; output element (row, k) is offs = row * K + k, and idx has
    # the same layout
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_out
    col = tl.load(idx_ptr + offs, mask=mask, other=0)
    row = offs // K
    # a scattered read from x's row; the indices are trusted (not bounds-checked)
    val = tl.load(x_ptr + row * N + col, mask=mask, other=0.0)
    tl.store(out_ptr + offs, val, mask=mask)


def gather_lastdim(x: torch.Tensor, idx: torch.Tensor, BLOCK: int = 1024, num_warps: int = 4) -> torch.Tensor:
    assert x.dim() == 2 and idx.dim() == 2 and idx.shape[0] == x.shape[0]
    x = x.contiguous()
    idx = idx.contiguous()
    M, N = x.shape
    K = idx.shape[1]
    out = torch.empty((M, K), dtype=x.dtype, device=x.device)
    n_out = M * K
    block = min(BLOCK, triton.next_power_of_2(max(n_out, 1)))
    _gather_lastdim_kernel[(triton.cdiv(n_out, block),)](x, idx, out, n_out, N, K, BLOCK=block,
                                                        num_warps=num_warps)
    return out
