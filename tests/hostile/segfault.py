# expect: crash
# task: softmax_fp32
# why: a kernel stores 2**46 elements past its pointer and passes the static check: SIGSEGV under the CPU interpreter; on an H200 CUDA raises "illegal memory access" (context lost, also a crash)
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
