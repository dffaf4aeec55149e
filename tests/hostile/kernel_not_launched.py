# expect: no_triton_kernel
# task: softmax_fp32
# why: defines a real softmax kernel as decoration but never launches it; the result comes from operators
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _row_softmax(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + row * N + offs, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * N + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax(x):
    e = math.e**x
    total = e[:, :1] * 0
    for j in range(x.shape[1]):
        total = total + e[:, j : j + 1]
    return e / total
