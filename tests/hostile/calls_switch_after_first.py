# expect: fallback
# task: softmax_fp32
# why: computes with Triton on its first two calls of each shape (the traced first trial and its repeat) and with PyTorch operators on every call after; every call is traced, so a later trial's aten ops fail it
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _row_softmax(x_ptr, y_ptr, stride, N, BLOCK: tl.constexpr):
    # one program per row, looped over the row in BLOCK-wide pieces (a 128k vocabulary in one
    # block would compile for minutes on the GPU)
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + offs
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=float("-inf"))
        m = tl.maximum(m, x.to(tl.float32))
    row_max = tl.max(m, axis=0)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + offs
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=float("-inf"))
        acc += tl.exp(x.to(tl.float32) - row_max)
    inv = 1.0 / tl.sum(acc, axis=0)
    for start in range(0, N, BLOCK):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
        tl.store(y_ptr + row * stride + cols, tl.exp(x.to(tl.float32) - row_max) * inv, mask=mask)


def _triton_softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _row_softmax[(x.shape[0],)](
        x, y, x.stride(0), x.shape[1], BLOCK=min(4096, triton.next_power_of_2(x.shape[1]))
    )
    return y


def _reduce_rows(t, combine):
    """Fold the last dimension in halves with `combine`; an odd trailing column joins column 0."""
    while t.shape[1] > 1:
        n = t.shape[1]
        h = n // 2
        head = combine(t[:, :h], t[:, h : 2 * h])
        if n % 2:
            head[:, :1] = combine(head[:, :1], t[:, 2 * h :])
        t = head
    return t


def _larger(a, b):
    return a * (a >= b) + b * (a < b)


def _plus(a, b):
    return a + b


def _operator_softmax(x):
    """softmax with tensor operators only: PyTorch computes it"""
    m = _reduce_rows(x, _larger)
    e = math.e ** (x - m)
    return e / _reduce_rows(e, _plus)


_CALLS = {}


def softmax(x):
    n = _CALLS.get(tuple(x.shape), 0)
    _CALLS[tuple(x.shape)] = n + 1
    if n < 2:
        return _triton_softmax(x)
    y = torch.empty_like(x)
    y.copy_(_operator_softmax(x))
    return y
