# expect: numerical_mismatch
# bug: the carry is overwritten with the last chunk's total (carry = ...) instead of accumulated (carry += ...), so from the third chunk on every prefix is short
"""Known-bad row cumsum: block scan plus a carry that forgets all but the previous chunk."""

import torch
import triton
import triton.language as tl


@triton.jit
def _cumsum_kernel(x_ptr, y_ptr, stride_x, stride_y, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * stride_x
    y_row = y_ptr + row.to(tl.int64) * stride_y
    offs = tl.arange(0, BLOCK_N)
    carry = tl.zeros([1], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)
        carry = tl.zeros([1], tl.float32) + tl.sum(x, axis=0)


def cumsum(x: torch.Tensor, BLOCK_N: int = 256, num_warps: int = 4) -> torch.Tensor:
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    block = min(BLOCK_N, triton.next_power_of_2(N))
    _cumsum_kernel[(M,)](x, y, x.stride(0), y.stride(0), N, BLOCK_N=block, num_warps=num_warps)
    return y
