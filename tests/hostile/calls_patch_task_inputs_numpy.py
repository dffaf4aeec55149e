# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: at import it finds the task's module in sys.modules and wraps its make_inputs; the worker makes each trial's inputs through it outside every probe, where the wrapper computes the softmax of the inputs just made in numpy and keeps it; each call then Triton-copies the kept answer into the output: every op the worker sees in a call is a Triton launch; it passed past the static check (tried 2026-12-07) until the worker sealed the task's fields, classes and modules, the project's modules and torch's namespace before the candidate's import
import sys

import numpy as np
import torch
import triton
import triton.language as tl

_ANSWERS = []


def _wrap(module):
    made = module.make_inputs

    def make_inputs(*args, **kwargs):
        inputs = made(*args, **kwargs)
        a = inputs[0].detach().cpu().numpy().astype(np.float64)
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        right = (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
        _ANSWERS.append(torch.from_numpy(right).to(inputs[0].device))
        return inputs

    module.make_inputs = make_inputs


for _module in list(sys.modules.values()):  # the task's file, wherever the judge staged it
    if all(hasattr(_module, name) for name in ("make_inputs", "flops", "min_bytes")):
        _wrap(_module)


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
