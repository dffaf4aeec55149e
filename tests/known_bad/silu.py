# expect: nan_inf_mismatch
# bug: sigmoid written as exp(x) / (1 + exp(x)): for x > 88 both overflow to inf and inf / inf is NaN
"""Known-bad SiLU with the textbook sigmoid form."""

import torch
import triton
import triton.language as tl


@triton.jit
def _silu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    e = tl.exp(x)
    y = x * (e / (1.0 + e))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def silu(x: torch.Tensor, BLOCK: int = 4096, num_warps: int = 8) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    _silu_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=num_warps)
    return y
