# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: at import it keeps a copy of the task module's make_inputs and swaps the original function's `__code__` for code of its own, so every global still holds the same function object; the worker makes each trial's inputs through it outside every probe, where the candidate's code computes the softmax of the inputs just made in numpy and keeps it; each call then Triton-copies the kept answer into the output
import sys
import types

import numpy as np
import torch
import triton
import triton.language as tl

_ANSWERS = []
_ORIGINAL = []


def _made(*args, **kwargs):
    inputs = _ORIGINAL[0](*args, **kwargs)
    a = inputs[0].detach().cpu().numpy().astype(np.float64)
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    right = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    _ANSWERS.append(torch.from_numpy(right).to(inputs[0].device))
    return inputs


def _stand_in(dims, dtype, mode, gen):
    return __import__("sys").modules["kernforge_candidate"]._made(dims, dtype, mode, gen)


for _module in list(sys.modules.values()):  # the task's file, wherever the judge staged it
    _f = getattr(_module, "make_inputs", None) if isinstance(_module, types.ModuleType) else None
    if isinstance(_f, types.FunctionType) and hasattr(_module, "min_bytes"):
        _ORIGINAL.append(
            types.FunctionType(_f.__code__, _f.__globals__, _f.__name__, _f.__defaults__)
        )
        _f.__code__ = _stand_in.__code__


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def softmax(x):
    y = torch.empty_like(x)
    source = x
    if _ANSWERS and _ANSWERS[-1].shape == x.shape:
        source = _ANSWERS[-1]
    _copy[(triton.cdiv(x.numel(), 1024),)](source, y, x.numel(), BLOCK=1024)
    return y
