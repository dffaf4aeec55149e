# expect: timeout
# task: softmax_fp32
# gpu: true
# why: on the GPU, launches a kernel that spins on a flag nobody sets (a hang inside the kernel, not in Python); the judge must end it at its timeout and the next evaluation must pass
import torch
import triton
import triton.language as tl


@triton.jit
def _spin(flag_ptr, y_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
    v = tl.load(flag_ptr)
    while v == 0:
        v = tl.load(flag_ptr, volatile=True)


def softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    flag = torch.zeros(1, dtype=torch.int32, device=x.device)
    _spin[(triton.cdiv(x.numel(), 1024),)](flag, y, x, x.numel(), BLOCK=1024)
    return y
