# expect: fallback
# task: softmax_fp32
# why: a Triton max kernel looks at the input; on outlier-looking inputs (a value above 8) it computes with PyTorch operators instead, so only the outlier trials fall back; every trial is traced
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _row_softmax(x_ptr, y_ptr, stride, N, BLOCK: tl.constexpr):
    # one program per row; the whole row in one masked block (CPU shapes are small)
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


def _triton_softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _row_softmax[(x.shape[0],)](
        x, y, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1])
    )
    return y


@triton.jit
def _abs_max(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        v = tl.load(x_ptr + start + offs, mask=start + offs < n, other=0.0)
        acc = tl.maximum(acc, tl.abs(v))
    tl.store(out_ptr, tl.max(acc, axis=0))


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
    x = x.contiguous()
    peak = torch.empty(1, dtype=torch.float32, device=x.device)
    _abs_max[(1,)](x, peak, x.numel(), BLOCK=1024)
    if peak.item() <= 8.0:
        return _triton_softmax(x)
    y = torch.empty_like(x)
    y.copy_(_operator_softmax(x))
    return y
