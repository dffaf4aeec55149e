# expect: numerical_mismatch
# bug: Adam with L2 regularisation, not AdamW: weight decay is folded into the gradient (g + wd * p) instead of decoupled from it
"""Known-bad AdamW step: coupled weight decay."""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _adamw_kernel(
    p_ptr,
    g_ptr,
    m_ptr,
    v_ptr,
    p_out,
    m_out,
    v_out,
    n,
    wd,
    beta1,
    beta2,
    step_size,
    inv_sqrt_bc2,
    eps,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask, other=0.0)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    m = tl.load(m_ptr + offs, mask=mask, other=0.0)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    g = g + wd * p
    m = beta1 * m + (1.0 - beta1) * g
    v = beta2 * v + (1.0 - beta2) * g * g
    p = p - step_size * (m / (tl.sqrt(v) * inv_sqrt_bc2 + eps))
    tl.store(p_out + offs, p, mask=mask)
    tl.store(m_out + offs, m, mask=mask)
    tl.store(v_out + offs, v, mask=mask)


def adamw(
    param: torch.Tensor,
    grad: torch.Tensor,
    exp_avg: torch.Tensor,
    exp_avg_sq: torch.Tensor,
    BLOCK: int = 1024,
    num_warps: int = 4,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    n = param.numel()
    p_out = torch.empty_like(param)
    m_out = torch.empty_like(exp_avg)
    v_out = torch.empty_like(exp_avg_sq)
    lr, beta1, beta2, eps, wd, step = 1e-3, 0.9, 0.999, 1e-8, 1e-2, 10
    _adamw_kernel[(triton.cdiv(n, BLOCK),)](
        param,
        grad,
        exp_avg,
        exp_avg_sq,
        p_out,
        m_out,
        v_out,
        n,
        wd,
        beta1,
        beta2,
        lr / (1.0 - beta1**step),
        1.0 / math.sqrt(1.0 - beta2**step),
        eps,
        BLOCK=BLOCK,
        num_warps=num_warps,
    )
    return p_out, m_out, v_out
