# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: its kernel only copies x (wrong) and keeps the call's input and output; an audit hook of its own (sys.addaudithook) fires on the worker's next event after the call, reads the kept input into Python (tolist, not counted outside a call), computes the softmax with math.exp and writes it into the kept output through its own Triton copy kernel: no aten compute op, and the output is Triton-written; it passed past the static check until the audit hook was refused at import and Triton launches between a call's return and its shipped outputs failed the trial (tests/test_late_launch.py)
import math
import sys

import torch
import triton
import triton.language as tl

_KEPT = []


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def _rows(values):
    out = []
    for row in values:
        top = max(row)
        e = [math.exp(v - top) for v in row]
        s = sum(e)
        out.append([v / s for v in e])
    return out


def _hook(event, args):
    if not _KEPT or event.startswith(("sys.", "object.", "code.")):
        return
    x, y = _KEPT.pop()
    src = torch.tensor(_rows(x.reshape(-1, x.shape[-1]).tolist()), dtype=y.dtype)
    n = y.numel()
    _copy[(triton.cdiv(n, 1024),)](src, y, n, BLOCK=1024)


sys.addaudithook(_hook)


def softmax(x):
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    _KEPT.append((x, y))
    return y
