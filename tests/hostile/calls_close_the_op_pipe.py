# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: as calls_clear_the_recorder.py (PyTorch computes, the recorder's counts are emptied in place), but first, at import, it closes every pipe its process holds beyond stdin, stdout and stderr (found in /proc/self/fd), the judge's op pipe among them, so nothing it dispatches reaches the judge; run past the static check, a pipe closed before the worker's result came must fail the candidate
import os

import torch
import triton
import triton.language as tl
from torch.utils import _python_dispatch

for _fd in os.listdir("/proc/self/fd"):
    try:
        if int(_fd) > 2 and os.readlink(f"/proc/self/fd/{_fd}").startswith("pipe:"):
            os.close(int(_fd))
    except (OSError, ValueError):
        pass


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
