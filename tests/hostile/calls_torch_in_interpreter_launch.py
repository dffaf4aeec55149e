# expect: fallback
# task: softmax_fp32
# why: under TRITON_INTERPRET the kernel body runs as Python, so the body calls a plain helper that computes the softmax with PyTorch operators on tensors the wrapper stashed; the ops are dispatched inside a Triton launch, where the interpreter's own copies are ignored; compute ops there are a fallback (on a GPU this kernel does not compile)
import math

import torch
import triton
import triton.language as tl


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


_STASH = []


def _helper():
    x, y = _STASH
    y.copy_(_operator_softmax(x))
    return 0


@triton.jit
def _fake(x_ptr, n, BLOCK: tl.constexpr):
    _helper()
    offs = tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n)


def softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _STASH[:] = [x, y]
    _fake[(1,)](y, y.numel(), BLOCK=16)
    return y
