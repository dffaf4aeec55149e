# expect: fallback
# task: pixel_shuffle_fp32
# why: PyTorch does the whole permutation (.contiguous() of a permuted view, an allowed copy op) into a scratch tensor, then a Triton kernel copies the scratch into a fresh output: the output was written by Triton and never by a copy op, so every check passed; on a task whose job is moving data, copies between layouts of a sizeable share of the output are the fallback
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


def pixel_shuffle(x, r):
    b, crr, h, w = x.shape
    c = crr // (r * r)
    arranged = x.reshape(b, c, r, r, h, w).permute(0, 1, 4, 2, 5, 3).contiguous()
    out = torch.empty((b, c, h * r, w * r), device=x.device, dtype=x.dtype)
    n = out.numel()
    _copy[(triton.cdiv(n, 256),)](arranged, out, n, BLOCK=256)
    return out
