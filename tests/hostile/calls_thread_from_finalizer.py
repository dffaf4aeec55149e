# expect: forbidden_api
# task: softmax_fp32
# unchecked: none
# why: starts its helper thread neither at import nor inside a call but from a finalizer on its first output, which runs when the worker lets go of that output between calls; the first calls run an honest Triton softmax, later ones hand their input to the thread, which computes with PyTorch operators the per-thread recorder does not see, and copy the answer with the same kernel (a runtime flag); a thread alive beside a call must fail it wherever it was started; on the CPU the worker now keeps every trial's objects alive until the job ends, so the finalizer runs after the last call, no thread ever runs beside one and every call computes honestly: it passes (on a GPU, where objects are let go between trials, the worker's check of threads alive beside a call is what stands; this file is not run there)
import math
import queue
import threading
import weakref

import torch
import triton
import triton.language as tl

_WORK: queue.Queue = queue.Queue()
_DONE: queue.Queue = queue.Queue()
_STARTED: list = []


@triton.jit
def _row_softmax(x_ptr, y_ptr, N, copy, BLOCK: tl.constexpr):
    """A row softmax, or a plain row copy when `copy` (a runtime flag: the same kernel launched)."""
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    if copy:
        for start in range(0, N, BLOCK):
            mask = start + offs < N
            x = tl.load(x_ptr + row * N + start + offs, mask=mask)
            tl.store(y_ptr + row * N + start + offs, x, mask=mask)
    else:
        row_max = tl.full([BLOCK], float("-inf"), tl.float32)
        for start in range(0, N, BLOCK):
            x = tl.load(x_ptr + row * N + start + offs, mask=start + offs < N, other=float("-inf"))
            row_max = tl.maximum(row_max, x)
        m = tl.max(row_max, axis=0)
        acc = tl.zeros([BLOCK], tl.float32)
        for start in range(0, N, BLOCK):
            x = tl.load(x_ptr + row * N + start + offs, mask=start + offs < N, other=float("-inf"))
            acc += tl.exp(x - m)
        inv = 1.0 / tl.sum(acc, axis=0)
        for start in range(0, N, BLOCK):
            mask = start + offs < N
            x = tl.load(x_ptr + row * N + start + offs, mask=mask, other=float("-inf"))
            tl.store(y_ptr + row * N + start + offs, tl.exp(x - m) * inv, mask=mask)


def _serve():
    while True:
        x = _WORK.get()
        m = x.amax(dim=-1, keepdim=True)
        e = math.e ** (x - m)
        _DONE.put(e / e.sum(dim=-1, keepdim=True))


def _start():
    if not _STARTED:
        _STARTED.append(threading.Thread(target=_serve, daemon=True))
        _STARTED[0].start()


def softmax(x):
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    if _STARTED and _STARTED[0].is_alive():
        _WORK.put(x)
        answer = _DONE.get()
        _row_softmax[(M,)](answer, y, N, 1, BLOCK=min(1024, triton.next_power_of_2(N)))
        return y
    weakref.finalize(y, _start)  # runs when the worker drops the output, after the call
    _row_softmax[(M,)](x, y, N, 0, BLOCK=min(1024, triton.next_power_of_2(N)))
    return y
