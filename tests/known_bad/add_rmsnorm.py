# expect: numerical_mismatch
# bug: the sum of squares is taken over x alone, not over the residual sum h = x + residual it normalises
"""Known-bad fused residual add + RMSNorm: the statistics line was not updated when the add was fused in."""

import torch
import triton
import triton.language as tl


@triton.jit
def _add_rmsnorm_kernel(x_ptr, r_ptr, w_ptr, out_ptr, h_ptr, stride, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    h = (x + r).to(h_ptr.dtype.element_ty)
    tl.store(h_ptr + row * stride + cols, h, mask=mask)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    out = h.to(tl.float32) * rstd * w
    tl.store(out_ptr + row * stride + cols, out.to(out_ptr.dtype.element_ty), mask=mask)


def add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, num_warps: int = 8
) -> tuple[torch.Tensor, torch.Tensor]:
    x = x.contiguous()
    residual = residual.contiguous()
    M, N = x.shape
    out = torch.empty_like(x)
    h = torch.empty_like(x)
    _add_rmsnorm_kernel[(M,)](
        x,
        residual,
        weight,
        out,
        h,
        x.stride(0),
        N,
        1e-5,
        BLOCK_N=triton.next_power_of_2(N),
        num_warps=num_warps,
    )
    return out, h
