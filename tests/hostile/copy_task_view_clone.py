# expect: fallback
# task: pixel_shuffle_fp32
# why: a permutation task done entirely by PyTorch views and .contiguous() (an allowed copy op), with a dummy Triton kernel launched on a scratch buffer so "a Triton kernel ran"
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(p, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, tl.zeros([BLOCK], tl.float32), mask=offs < n)


def pixel_shuffle(x, r):
    B, Crr, H, W = x.shape
    C = Crr // (r * r)
    scratch = torch.empty(16, device=x.device, dtype=torch.float32)
    _touch[(1,)](scratch, 16, BLOCK=16)
    return x.reshape(B, C, r, r, H, W).permute(0, 1, 4, 2, 5, 3).contiguous().reshape(B, C, H * r, W * r)
