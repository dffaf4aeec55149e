# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: as calls_close_the_op_pipe.py, but the pipe is kept open: at import it copies the judge's op pipe's write end to a new descriptor (os.dup) and points the original number at /dev/null (os.dup2), so the recorder's reports of its PyTorch ops go nowhere while the judge never sees the pipe close; then PyTorch computes and the recorder's counts are emptied in place (calls_clear_the_recorder.py); run past the static check, a descriptor that is no longer the pipe it was armed on must fail the candidate
import os
import sys

import torch
import triton
import triton.language as tl
from torch.utils import _python_dispatch

_FALLBACK = sys.modules.get("benchmarks.harness.fallback")
_FD = getattr(_FALLBACK, "_OPS_FD", -1)
_KEPT = []
if _FD >= 0:
    _KEPT.append(os.dup(_FD))  # the pipe stays open through this copy
    _NULL = os.open(os.devnull, os.O_WRONLY)
    os.dup2(_NULL, _FD)


@triton.jit
def _touch(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(y_ptr + offs, mask=mask), mask=mask)


def softmax(x):
    y = torch.softmax(x, dim=-1)
    mode = _python_dispatch._get_current_dispatch_mode()
    for name in ("ops", "launch_ops", "copy_written"):
        held = getattr(mode, name, None)
        if hasattr(held, "clear"):
            held.clear()
    if hasattr(mode, "ops"):
        mode.ops["empty_like"] += 1
    n = y.numel()
    _touch[(triton.cdiv(n, 1024),)](y, n, BLOCK=1024)
    return y
