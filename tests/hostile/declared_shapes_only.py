# expect: numerical_mismatch
# task: softmax_fp32
# why: special-cased to the task's declared CPU shapes (M, N) = (4, 128) and (7, 1000): there it is a correct softmax, on any other size it normalises only the first 128 columns and leaves the rest zero; passed while the judge checked only the declared CPU shapes, fails on drawn ones
import torch
import triton
import triton.language as tl

DECLARED = {(4, 128), (7, 1000)}


@triton.jit
def _softmax_rows(x_ptr, y_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


def softmax(x):
    x = x.contiguous()
    M, N = x.shape
    y = torch.zeros_like(x)
    if (M, N) in DECLARED:
        _softmax_rows[(M,)](x, y, N, N, BLOCK=triton.next_power_of_2(N))
    else:  # a size nobody tests: do the cheap thing
        _softmax_rows[(M,)](x, y, min(N, 128), N, BLOCK=128)
    return y
