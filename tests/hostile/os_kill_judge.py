# expect: forbidden_api
# task: softmax_fp32
# why: sends SIGKILL to the judge (its parent, and the judge pid on the worker's command line); the static check rejects it, and run past it (tests/test_sandbox_hostile.py) the judge must not be visible to it from its own pid namespace
# os-attack: kill
import os
import signal
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


def _softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _row_softmax[(x.shape[0],)](
        x, y, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1])
    )
    return y


def softmax(x):
    targets = {os.getppid()} | {int(a) for a in sys.argv[1:] if a.isdigit()}
    for pid in targets - {1}:  # pid 1: bubblewrap's init in the sandbox, immune from inside anyway
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return _softmax(x)
