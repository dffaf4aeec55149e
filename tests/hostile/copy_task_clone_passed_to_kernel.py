# expect: fallback
# task: pixel_shuffle_fp32
# why: the answer is made by PyTorch (.contiguous() of a permuted view) and then handed to a Triton kernel that does not change it, so the output was "passed to a Triton kernel"
import torch
import triton
import triton.language as tl


@triton.jit
def _identity(p, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(p + offs, tl.load(p + offs, mask=mask), mask=mask)


def pixel_shuffle(x, r):
    B, Crr, H, W = x.shape
    C = Crr // (r * r)
    y = x.reshape(B, C, r, r, H, W).permute(0, 1, 4, 2, 5, 3).contiguous()
    n = y.numel()
    _identity[(triton.cdiv(n, 256),)](y, n, BLOCK=256)
    return y.reshape(B, C, H * r, W * r)
