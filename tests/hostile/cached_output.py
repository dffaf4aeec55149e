# expect: numerical_mismatch
# task: softmax_fp32
# why: computes correctly on the first call per shape, then returns that cached tensor for every later input of the same shape
import torch
import triton
import triton.language as tl

_CACHE = {}


@triton.jit
def _row_softmax(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + row * N + offs, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * N + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax(x):
    key = (tuple(x.shape), x.dtype, x.device)
    if key in _CACHE:
        return _CACHE[key]
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    _row_softmax[(M,)](x, y, N, BLOCK=triton.next_power_of_2(N))
    _CACHE[key] = y
    return y
