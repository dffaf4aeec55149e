# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: switches the judge's dispatch recorder off with torch._C._DisableTorchDispatch() around a PyTorch-operator softmax, then Triton-copies the result into its output; run past the static check, the worker sees the recorder switched off during the call
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


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


def softmax(x):
    with torch._C._DisableTorchDispatch():
        host = _operator_softmax(x.contiguous())
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](host, y, n, BLOCK=1024)
    return y
