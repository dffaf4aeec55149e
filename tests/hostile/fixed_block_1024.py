# expect: numerical_mismatch
# task: softmax_fp32
# why: a row kernel with one fixed BLOCK=1024 and no loop over columns: correct for N <= 1024 (every declared CPU shape), columns past 1024 are never read or written; fails once a drawn CPU shape has N > 1024
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_one_block(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * N + cols, e / tl.sum(e, axis=0), mask=mask)


def softmax(x):
    x = x.contiguous()
    M, N = x.shape
    y = torch.zeros_like(x)
    _softmax_one_block[(M,)](x, y, N, BLOCK=1024)
    return y
