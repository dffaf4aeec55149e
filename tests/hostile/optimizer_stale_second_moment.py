# expect: numerical_mismatch
# task: adam_fp32
# why: an Adam step that returns the second moment v' as it came in (neither decayed by beta2 nor given its (1 - beta2) d^2 term) wherever |d| <= 2.5e-3, about 98 % of the judge's gradients; p' and m' are right. v' is ~1e-6 and both missing terms are ~1e-9, under the task's absolute floor of 1e-8 until 2026-12-08, so a kernel that never updates exp_avg_sq for ordinary gradients passed; the bound is now relative to each output's own terms
import math

import torch
import triton
import triton.language as tl

LR, B1, B2, STEP = 1e-3, 0.9, 0.999, 10


@triton.jit
def _adam(p_ptr, g_ptr, m_ptr, v_ptr, po, mo, vo, n, c1, c2, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask)
    g = tl.load(g_ptr + offs, mask=mask)
    m = tl.load(m_ptr + offs, mask=mask)
    v = tl.load(v_ptr + offs, mask=mask)
    d = g + 1e-4 * p
    m2 = 0.9 * m + 0.1 * d
    v2 = 0.999 * v + 0.001 * d * d
    denom = tl.sqrt(v2) / c2 + 1e-8
    tl.store(po + offs, p - c1 * m2 / denom, mask=mask)
    tl.store(mo + offs, m2, mask=mask)
    tl.store(vo + offs, tl.where(tl.abs(d) > 2.5e-3, v2, v), mask=mask)


def adam(param, grad, exp_avg, exp_avg_sq):
    n = param.numel()
    po, mo, vo = torch.empty_like(param), torch.empty_like(param), torch.empty_like(param)
    c1 = LR / (1.0 - B1**STEP)
    c2 = math.sqrt(1.0 - B2**STEP)
    _adam[(triton.cdiv(n, 1024),)](
        param, grad, exp_avg, exp_avg_sq, po, mo, vo, n, c1, c2, BLOCK=1024
    )
    return po, mo, vo
