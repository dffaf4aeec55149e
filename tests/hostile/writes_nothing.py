# expect: nan_inf_mismatch
# task: softmax_fp32
# why: launches a kernel that loads but never stores, and returns torch.empty_like(x); the judge poisons fresh allocations with NaN
import torch
import triton
import triton.language as tl


@triton.jit
def _load_only(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    x = x * 2.0


def softmax(x):
    n = x.numel()
    _load_only[(triton.cdiv(n, 1024),)](x, n, BLOCK=1024)
    return torch.empty_like(x)
