# expect: numerical_mismatch
# task: softmax_bf16
# why: a wrong "softmax" (2 * x) for a bf16 task whose source never names the 32-bit float type and has no dot call: the CPU judge used to skip every numerical comparison of such a bf16 kernel (the interpreter computed bf16 on bit patterns), on words of a source the candidate writes, and it passed; the interpreter now computes bf16 as the GPU does and the numbers are checked
import torch
import triton
import triton.language as tl


@triton.jit
def _twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def softmax(x):
    y = torch.empty_like(x)
    n = x.numel()
    _twice[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y
