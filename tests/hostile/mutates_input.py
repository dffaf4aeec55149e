# expect: input_mutated
# task: softmax_fp32
# why: the kernel writes the (correct) softmax over x in place and returns x, destroying the caller's input
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_inplace(x_ptr, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(x_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax(x):
    M, N = x.shape
    _softmax_inplace[(M,)](x, x.stride(0), N, BLOCK=triton.next_power_of_2(N))
    return x
