# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: forks 200 processes that sleep and outlive the call; the static check rejects it, and run past it (tests/test_sandbox_hostile.py) every one of them must die with the worker's pid namespace when the worker exits by itself; through the judge its watchdog stops it first (more processes than it allows); since 2026-12-07 the probes refuse the first fork at import (trace_evaded); the pid namespace's teardown is tested directly (test_processes_started_in_the_sandbox_die_with_its_first_process)
# os-attack: fork
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
    for _ in range(200):
        try:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
        except OSError:
            break
    return _softmax(x)
