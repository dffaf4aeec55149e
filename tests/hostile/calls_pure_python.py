# expect: fallback
# task: softmax_fp32
# why: reads every element into Python (x[i, j].item()), computes the softmax with math.exp, builds a tensor from the list and hands it through a Triton copy kernel, so no aten compute op is dispatched and the output is Triton-written; the worker counts scalar reads during the call
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
    rows = []
    for i in range(x.shape[0]):
        vals = [x[i, j].item() for j in range(x.shape[1])]
        m = max(vals)
        e = [math.exp(v - m) for v in vals]
        s = sum(e)
        rows.append([v / s for v in e])
    host = torch.tensor(rows, dtype=x.dtype, device=x.device)
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](host, y, n, BLOCK=1024)
    return y
