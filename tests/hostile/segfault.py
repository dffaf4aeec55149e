# expect: crash
# task: softmax_fp32
# why: a kernel stores 2**46 elements past its pointer: SIGSEGV in the CPU interpreter (an illegal-address fault on a GPU); passes the static check
import torch
import triton
import triton.language as tl


@triton.jit
def _wild_store(y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK).to(tl.int64) + (1 << 46)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], tl.float32))


def softmax(x):
    y = torch.empty_like(x)
    _wild_store[(1,)](y, BLOCK=16)
    return y
