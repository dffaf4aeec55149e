# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: its kernel only copies x (wrong) and keeps the call's input and output; at import it adds an audit hook (sys.addaudithook, which cannot be removed and which no profile or trace check looks for) that fires on the worker's own events after the call (the trial writer opening its file, any os or open event) and writes torch.softmax of the kept input into the kept output in place, after the traced call and before its bytes are read; run past the static check, it is refused at import (the judge's own audit hook refuses sys.addaudithook once installed; before that the op pipe saw the softmax: fallback)
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


def _hook(event, args):
    if not _KEPT or event.startswith(("sys.", "object.", "code.")):
        return
    x, y = _KEPT.pop()
    y.copy_(torch.softmax(x, dim=-1))


sys.addaudithook(_hook)


def softmax(x):
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    _KEPT.append((x, y))
    return y
