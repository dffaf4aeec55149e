# expect: nan_inf_mismatch
# task: softmax_fp32
# stage_reached: correct_standard
# why: exp(x) / sum(exp(x)) without subtracting the row max: fine on unit-scale inputs, inf/inf = NaN on outliers
import torch
import triton
import triton.language as tl


@triton.jit
def _naive_softmax(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + offs
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=float("-inf"))
        acc += tl.exp(x)
    inv = 1.0 / tl.sum(acc, axis=0)
    for start in range(0, N, BLOCK):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=float("-inf"))
        tl.store(y_ptr + row * N + cols, tl.exp(x) * inv, mask=mask)


def softmax(x):
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    _naive_softmax[(M,)](x, y, N, BLOCK=min(1024, triton.next_power_of_2(N)))
    return y
