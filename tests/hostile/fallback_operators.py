# expect: fallback
# task: softmax_fp32
# why: a Triton copy is launched but softmax is computed with tensor operators only (invisible statically; the dispatch-mode detector sees pow/mul/add/div)
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def _launch_copy(x, y):
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)


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


def softmax(x):
    y = torch.empty_like(x)
    _launch_copy(x.contiguous(), y)
    m = _reduce_rows(y, _larger)
    e = math.e ** (y - m)
    return e / _reduce_rows(e, _plus)
