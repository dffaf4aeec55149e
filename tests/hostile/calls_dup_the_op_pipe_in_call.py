# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: as calls_dup_the_op_pipe.py, but only for the length of each call: /dev/null is put on the op pipe's number while PyTorch computes and the pipe (kept open through a copy) is put back before the call returns, so a check of the descriptor after the call finds the pipe where it was; the recorder's counts are emptied in place; run past the static check, the report of the first PyTorch op must find the descriptor moved and fail the candidate
import os
import sys

import torch
import triton
import triton.language as tl
from torch.utils import _python_dispatch

_FALLBACK = sys.modules.get("benchmarks.harness.fallback")
_FD = getattr(_FALLBACK, "_OPS_FD", -1)
_KEPT = os.dup(_FD) if _FD >= 0 else -1
_NULL = os.open(os.devnull, os.O_WRONLY)


@triton.jit
def _touch(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(y_ptr + offs, mask=mask), mask=mask)


def softmax(x):
    if _FD >= 0:
        os.dup2(_NULL, _FD)
    try:
        y = torch.softmax(x, dim=-1)
    finally:
        if _FD >= 0:
            os.dup2(_KEPT, _FD)
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
