# expect: forbidden_api
# unchecked: trace_evaded
# task: softmax_fp32
# why: reads the input through ctypes at its data pointer (no tensor read, so no probe counts it), computes the softmax in Python with math.exp, writes it through ctypes into a fresh tensor and hands that through a Triton copy kernel
import ctypes
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def softmax(x):
    x = x.contiguous()
    rows, cols = x.shape
    src = (ctypes.c_float * (rows * cols)).from_address(x.data_ptr())
    s = torch.empty_like(x)
    dst = (ctypes.c_float * (rows * cols)).from_address(s.data_ptr())
    for i in range(rows):
        row = src[i * cols : (i + 1) * cols]
        m = max(row)
        e = [math.exp(v - m) for v in row]
        t = sum(e)
        for j in range(cols):
            dst[i * cols + j] = e[j] / t
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](s, y, n, BLOCK=1024)
    return y
