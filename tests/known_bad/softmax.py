# expect: nan_inf_mismatch
# bug: no max-subtraction: exp(x) overflows to inf on outlier rows, and inf / inf is NaN
"""Known-bad softmax: plain exp-sum-normalise, one program per row."""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, stride_x, stride_y, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * stride_x
    y_row = y_ptr + row.to(tl.int64) * stride_y
    offs = tl.arange(0, BLOCK_N)
    s = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        s += tl.exp(x)
    inv = 1.0 / tl.sum(s, axis=0)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_row + cols, (tl.exp(x) * inv).to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor, BLOCK_N: int = 4096, num_warps: int = 8) -> torch.Tensor:
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    block = min(BLOCK_N, triton.next_power_of_2(N))
    _softmax_kernel[(M,)](x, y, x.stride(0), y.stride(0), N, BLOCK_N=block, num_warps=num_warps)
    return y
