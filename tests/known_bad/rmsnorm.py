# expect: numerical_mismatch
# bug: the per-lane sum-of-squares accumulator is fp16: a 1000x outlier's square overflows to inf, rstd becomes 0 and the whole row is zeroed
"""Known-bad RMSNorm: an fp16 accumulator "to save registers"."""

import torch
import triton
import triton.language as tl


@triton.jit
def _rmsnorm_kernel(x_ptr, w_ptr, y_ptr, stride_x, stride_y, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * stride_x
    y_row = y_ptr + row.to(tl.int64) * stride_y
    offs = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], tl.float16)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += (x * x).to(tl.float16)
    rstd = 1.0 / tl.sqrt(tl.sum(acc.to(tl.float32), axis=0) / N + eps)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def rmsnorm(
    x: torch.Tensor, weight: torch.Tensor, BLOCK_N: int = 8192, num_warps: int = 8
) -> torch.Tensor:
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    block = min(BLOCK_N, triton.next_power_of_2(N))
    _rmsnorm_kernel[(M,)](
        x, weight, y, x.stride(0), y.stride(0), N, 1e-5, BLOCK_N=block, num_warps=num_warps
    )
    return y
