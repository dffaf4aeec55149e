# expect: fallback
# task: swin_cyclic_roll_fp32
# why: the roll done by PyTorch copies that are contiguous on both sides: for every (b, h) the rolled row is two copy_ calls between contiguous 1-D pieces (a slice of the source row, a slice of the scratch's row), then a Triton kernel copies the scratch into the output; counting only copies between layouts missed it, every copy a MOVES_DATA task's call makes now counts
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=m), mask=m)


def swin_cyclic_roll(x: torch.Tensor, shift: int) -> torch.Tensor:
    x = x.contiguous()
    B, H, W, C = x.shape
    scratch = torch.empty_like(x)
    head = (W - shift) * C
    for b in range(B):
        for h in range(H):
            src = x[b, (h + shift) % H].reshape(-1)
            dst = scratch[b, h].reshape(-1)
            dst.narrow(0, 0, head).copy_(src.narrow(0, shift * C, head))
            dst.narrow(0, head, shift * C).copy_(src.narrow(0, 0, shift * C))
    y = torch.empty_like(x)
    n = y.numel()
    _copy[(triton.cdiv(n, 1024),)](scratch, y, n, BLOCK=1024)
    return y
