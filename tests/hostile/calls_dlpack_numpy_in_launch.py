# expect: forbidden_api
# task: softmax_fp32
# unchecked: fallback
# why: under TRITON_INTERPRET the kernel body runs as Python: it calls a helper that takes NumPy views of the input and output through DLPack (np.from_dlpack, not .numpy()) and computes the softmax with NumPy into the output view, inside the launch, where the interpreter's own copies are ignored
import numpy as np
import torch
import triton
import triton.language as tl

_STASH = []


def _helper():
    x, y = _STASH
    a = np.from_dlpack(x)
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    np.from_dlpack(y)[...] = e / e.sum(axis=-1, keepdims=True)
    return 0


@triton.jit
def _fake(x_ptr, n, BLOCK: tl.constexpr):
    _helper()
    offs = tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n)


def softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _STASH[:] = [x, y]
    _fake[(1,)](y, y.numel(), BLOCK=16)
    return y
