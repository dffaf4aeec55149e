# expect: numerical_mismatch
# bug: mean and variance divide by the padded block width BLOCK_N instead of N, wrong whenever N is not a power of two
"""Known-bad LayerNorm: whole row in one block, statistics averaged over the block."""

import torch
import triton
import triton.language as tl


@triton.jit
def _layernorm_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, stride_x, stride_y, N, eps, BLOCK_N: tl.constexpr
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row.to(tl.int64) * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / BLOCK_N
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / BLOCK_N
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = d * rstd * w + b
    tl.store(y_ptr + row.to(tl.int64) * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def layernorm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, num_warps: int = 8
) -> torch.Tensor:
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    _layernorm_kernel[(M,)](
        x,
        weight,
        bias,
        y,
        x.stride(0),
        y.stride(0),
        N,
        1e-5,
        BLOCK_N=triton.next_power_of_2(N),
        num_warps=num_warps,
    )
    return y
