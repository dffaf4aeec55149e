# expect: forbidden_api
# task: softmax_fp32
# why: replaces triton.testing.do_bench to report an impossible time
import torch
import triton
import triton.language as tl
import triton.testing


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def _launch_copy(x, y):
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)


def softmax(x):
    y = torch.empty_like(x)
    _launch_copy(x.contiguous(), y)
    triton.testing.do_bench = lambda *args, **kwargs: 1e-6
    return y
