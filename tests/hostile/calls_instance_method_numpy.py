# expect: forbidden_api
# task: softmax_fp32
# unchecked: numerical_mismatch
# why: its kernel only copies x (wrong); it sets an instance attribute `detach` on its output tensor (a plain torch.Tensor), so the worker's trial writer, calling `detach()` on the output after the call, runs the candidate's function, which computes the softmax in numpy over the input and writes it through the output's numpy() view first; it passed past the static check until the worker dropped the instance attributes of the call's output and input tensors inside the call's probe (transport.bare), and it is judged on its own wrong kernel
import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def softmax(x):
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)

    def detach():
        a = x.numpy()
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        y.numpy()[...] = e / e.sum(axis=-1, keepdims=True)
        return torch.Tensor.detach(y)

    y.detach = detach
    return y
