# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: starts a thread at import that waits for work; each call hands its input to that thread, which computes the softmax with PyTorch operators (the dispatch recorder is per thread, and the thread was not started during the call), then Triton-copies the answer out; run past the static check, a thread the candidate started and left alive must fail its calls
import math
import queue
import threading

import torch
import triton
import triton.language as tl

_WORK: queue.Queue = queue.Queue()
_DONE: queue.Queue = queue.Queue()


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def _serve():
    while True:
        x = _WORK.get()
        m = x.amax(dim=-1, keepdim=True)
        e = math.e ** (x - m)
        _DONE.put(e / e.sum(dim=-1, keepdim=True))


threading.Thread(target=_serve, daemon=True).start()


def softmax(x):
    _WORK.put(x.contiguous())
    answer = _DONE.get()
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](answer, y, n, BLOCK=1024)
    return y
