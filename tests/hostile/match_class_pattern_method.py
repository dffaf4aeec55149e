# expect: forbidden_api
# task: softmax_fp32
# why: a class pattern's keyword (`case torch.Tensor(apply_=ap)`) fetches a Tensor method the check forbids (apply_: a Python function per element, no aten op dispatched) and the softmax is computed in pure Python after a Triton copy into the output; the static check never looked inside match statements
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
    match y:
        case torch.Tensor(apply_=each):
            pass
    seen = []
    each(lambda v: seen.append(v) or v)
    out = []
    for r in range(rows):
        row = seen[r * cols : (r + 1) * cols]
        top = max(row)
        e = [math.exp(v - top) for v in row]
        total = sum(e)
        out.extend(v / total for v in e)
    it = iter(out)
    each(lambda _v: next(it))
    return y
