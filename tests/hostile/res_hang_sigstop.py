# expect: forbidden_api
# task: softmax_fp32
# unchecked: timeout
# why: stops itself with SIGSTOP in the middle of the call (a hang that no handler can break); the static check rejects os.kill, and run past it the judge must end it at its timeout (SIGKILL reaches a stopped process) with no process left
import os
import signal

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
    y = _softmax(x)
    os.kill(os.getpid(), signal.SIGSTOP)
    return y
