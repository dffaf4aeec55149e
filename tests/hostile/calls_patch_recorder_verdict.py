# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: reaches the worker's fallback module through sys.modules and patches AtenRecorder.compute_ops to report nothing, then computes with PyTorch operators; run past the static check, the judge classifies the shipped op counts itself and finds the compute ops (fallback); since the worker checks its protected code after every trial it stops first, the patch seen (trace_evaded)
import math
import sys

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


sys.modules["benchmarks.harness.fallback"].AtenRecorder.compute_ops = lambda self: {}


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def softmax(x):
    host = _operator_softmax(x.contiguous())
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](host, y, n, BLOCK=1024)
    return y
