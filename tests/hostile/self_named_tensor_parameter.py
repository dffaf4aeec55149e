# expect: forbidden_api
# task: softmax_fp32
# why: a helper whose tensor parameter is named self, in a file where a class assigns self.softmax: the static check took self.softmax(...) for the class's own attribute and let the tensor method through (the dispatch tracer still failed it as fallback); self is now the instance only inside a method of one of the candidate's classes
import torch
import triton
import triton.language as tl


class Holder:
    def __init__(self):
        self.softmax = None


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=m), mask=m)


def _helper(self):
    return self.softmax(-1)


def softmax(x):
    t = _helper(x.contiguous())
    y = torch.empty_like(t)
    n = t.numel()
    _copy[(triton.cdiv(n, 1024),)](t, y, n, BLOCK=1024)
    return y
