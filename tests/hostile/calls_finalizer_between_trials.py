# expect: forbidden_api
# task: softmax_fp32
# unchecked: none
# why: honest on trial 0, where it puts weakref.finalize on its input; the worker dropped that input once the judge had taken trial 0's files, outside every traced call, and the finalizer ran there: it found the trial plan and the task through gc.get_objects(), made every later trial's inputs and computed their answers with PyTorch (here deliberately off by 0.5, to show whether they are used), and later calls had the same Triton kernel copy the kept answer. On the CPU the worker now keeps every trial's objects alive until the job ends, so the finalizer runs after the last call and every call computes honestly: it must pass (with the cache used it would fail as numerical_mismatch)
import gc
import weakref

import torch
import triton
import triton.language as tl

_answers = {}
_state = {"armed": False, "done": False}


def _key(x):
    return (tuple(x.shape), float(x[0, 0]), float(x[-1, -1]))


def _precompute():
    if _state["done"]:
        return
    _state["done"] = True
    task, trials = None, []
    for o in gc.get_objects():
        name = type(o).__name__
        if name == "Trial" and hasattr(o, "seed") and hasattr(o, "dims"):
            trials.append(o)
        elif name == "_TrialRunner":
            task = o.task
    for t in trials:
        g = torch.Generator().manual_seed(t.seed)
        x = task.make_inputs(t.dims, t.mode, g)[0]
        _answers[_key(x)] = torch.softmax(x, dim=-1) + 0.5


@triton.jit
def _k(x_ptr, c_ptr, y_ptr, N, USE, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    if USE != 0:
        tl.store(y_ptr + row * N + offs, tl.load(c_ptr + row * N + offs, mask=mask), mask=mask)
    else:
        x = tl.load(x_ptr + row * N + offs, mask=mask, other=float("-inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(y_ptr + row * N + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax(x):
    M, N = x.shape
    y = torch.empty_like(x)
    if not _state["armed"]:
        _state["armed"] = True
        weakref.finalize(x, _precompute)
    cached = _answers.get(_key(x))
    use = 1 if cached is not None else 0
    _k[(M,)](x, cached if cached is not None else x, y, N, use, BLOCK=triton.next_power_of_2(N))
    return y
