# expect: numerical_mismatch
# bug: lanes are combined with tl.argmax over lanes, which breaks ties by lane number, not by column: a later occurrence of a tied maximum can win
"""Known-bad row argmax: per-lane running maxima, then the lane that holds the row max."""

import torch
import triton
import triton.language as tl


@triton.jit
def _row_argmax_kernel(x_ptr, out_ptr, stride_x, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * stride_x
    offs = tl.arange(0, BLOCK_N)
    best = tl.full([BLOCK_N], float("-inf"), tl.float32)
    best_idx = tl.zeros([BLOCK_N], tl.int32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        take = x > best
        best = tl.where(take, x, best)
        best_idx = tl.where(take, cols, best_idx)
    lane = tl.argmax(best, axis=0)
    idx = tl.sum(tl.where(offs == lane, best_idx, 0), axis=0)
    tl.store(out_ptr + row, idx.to(tl.int64))


def row_argmax(x: torch.Tensor, BLOCK_N: int = 256, num_warps: int = 4) -> torch.Tensor:
    x = x.contiguous()
    M, N = x.shape
    out = torch.empty((M,), dtype=torch.int64, device=x.device)
    block = min(BLOCK_N, triton.next_power_of_2(N))
    _row_argmax_kernel[(M,)](x, out, x.stride(0), N, BLOCK_N=block, num_warps=num_warps)
    return out
