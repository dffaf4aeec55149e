# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: double-forks a setsid daemon that writes late.txt into its folder 3 s after the evaluation; the static check rejects it, and run past it (tests/test_sandbox_hostile.py) the daemon must die with the worker's pid namespace and never write; since 2026-12-07 the probes refuse the fork at import (trace_evaded); the namespace teardown is tested directly
# os-attack: daemon
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


def softmax(x):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(3)
            with open("late.txt", "w") as f:
                f.write("the daemon outlived the evaluation")
        os._exit(0)
    return _softmax(x)
