# expect: forbidden_api
# task: softmax_fp32
# unchecked: fallback
# why: Tensor.apply_ calls a Python function on every element of a CPU tensor and dispatches no aten op: the candidate copies x into y with a Triton kernel, reads every value out through one apply_, computes the softmax with math.exp and writes it back through another; past the static check the worker must count apply_ as reading every element (pure-Python compute)
import math

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


def softmax(x):
    rows, cols = x.shape
    y = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    seen = []
    y.apply_(lambda v: seen.append(v) or v)
    out = []
    for r in range(rows):
        row = seen[r * cols : (r + 1) * cols]
        top = max(row)
        e = [math.exp(v - top) for v in row]
        total = sum(e)
        out.extend(v / total for v in e)
    it = iter(out)
    y.apply_(lambda _v: next(it))
    return y
