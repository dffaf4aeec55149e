# expect: forbidden_api
# task: softmax_fp32
# unchecked: numerical_mismatch
# why: its kernel only copies x (wrong); it returns its output inside a list subclass whose __iter__ (run by the worker's trial writer after the call) computes the softmax in numpy over the kept input and writes it through the output's numpy() view; it passed past the static check until the worker rebuilt a call's output inside the call's probe from the base types' own iterators (transport.plain), so no method of the candidate's runs after the call, and it is judged on its own wrong kernel
import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class _Out(list):
    calls = 0

    def __iter__(self):
        x = self.x
        y = list.__getitem__(self, 0)
        a = x.numpy()
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        y.numpy()[...] = e / e.sum(axis=-1, keepdims=True)
        return list.__iter__(self)


def softmax(x):
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    out = _Out([y])
    out.x = x
    return out
