# expect: forbidden_api
# task: softmax_fp32
# why: hands the computation to torch.compile, whose Inductor kernels are not the candidate's
import torch
import triton
import triton.language as tl


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
    return torch.compile(lambda t: t.exp() / t.exp().sum(-1, keepdim=True))(y)
