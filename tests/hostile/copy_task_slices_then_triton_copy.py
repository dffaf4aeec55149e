# expect: fallback
# task: swin_cyclic_roll_fp32
# why: the roll done by PyTorch, four slice assignments (copy_, an allowed op) into a scratch tensor, then a Triton kernel copies the scratch into a fresh output: no compute op, the output written by Triton; on a task whose job is moving data, copies between layouts of a sizeable share of the output are the fallback
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


def swin_cyclic_roll(x, shift):
    _, h, w, _ = x.shape
    s = shift
    scratch = torch.empty_like(x)
    scratch[:, : h - s, : w - s] = x[:, s:, s:]
    scratch[:, : h - s, w - s :] = x[:, s:, :s]
    scratch[:, h - s :, : w - s] = x[:, :s, s:]
    scratch[:, h - s :, w - s :] = x[:, :s, :s]
    out = torch.empty_like(x)
    n = out.numel()
    _copy[(triton.cdiv(n, 1024),)](scratch, out, n, BLOCK=1024)
    return out
