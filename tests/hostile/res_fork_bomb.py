# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: a fork bomb (every process forks again and again; root is not held to RLIMIT_NPROC); the static check rejects os.fork, and run past it the judge's watchdog must count the sandbox's processes and stop it with resource_limit, and no process may be left; it stops by itself at about 200 processes (a count that races) so that a broken judge cannot take the test machine down; since 2026-12-07 the probes refuse the first fork at import (trace_evaded)
import os
import time

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


def _alive():
    return sum(name.isdigit() for name in os.listdir("/proc"))


def softmax(x):
    for _ in range(200):
        if _alive() >= 200:
            break
        try:
            os.fork()  # parent and child both go on forking
        except OSError:
            time.sleep(0.01)
    time.sleep(60)
    return _softmax(x)
