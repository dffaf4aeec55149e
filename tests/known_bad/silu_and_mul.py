# expect: numerical_mismatch
# bug: wrong stride: rows are addressed with the output's row stride H instead of the input's 2H, so every row after the first reads the wrong data
"""Known-bad SiLU-and-mul: one stride passed for both input and output rows."""

import torch
import triton
import triton.language as tl


@triton.jit
def _silu_and_mul_kernel(x_ptr, out_ptr, H, stride_row, BLOCK_H: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    blk = tl.program_id(1)
    cols = blk * BLOCK_H + tl.arange(0, BLOCK_H)
    mask = cols < H
    x_row = x_ptr + row * stride_row
    g = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(x_row + H + cols, mask=mask, other=0.0).to(tl.float32)
    y = g / (1.0 + tl.exp(-g)) * u
    tl.store(out_ptr + row * stride_row + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def silu_and_mul(x: torch.Tensor, BLOCK_H: int = 1024, num_warps: int = 4) -> torch.Tensor:
    x = x.contiguous()
    M = x.shape[0]
    H = x.shape[1] // 2
    out = torch.empty((M, H), dtype=x.dtype, device=x.device)
    block = min(BLOCK_H, triton.next_power_of_2(H))
    _silu_and_mul_kernel[(M, triton.cdiv(H, block))](
        x, out, H, out.stride(0), BLOCK_H=block, num_warps=num_warps
    )
    return out
