# expect: forbidden_api
# task: softmax_fp32
# unchecked: fallback
# why: takes NumPy views of the input and output through DLPack (np.from_dlpack, not .numpy() or .tolist(), so no element is read into Python through a tensor method), computes the softmax with NumPy into the output's memory, then launches a Triton kernel that rewrites the output with itself
import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(y_ptr + offs, mask=mask), mask=mask)


def softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    a = np.from_dlpack(x)
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    np.from_dlpack(y)[...] = e / e.sum(axis=-1, keepdims=True)
    _touch[(triton.cdiv(y.numel(), 1024),)](y, y.numel(), BLOCK=1024)
    return y
