"""Log-sigmoid, min(x, 0) - log1p(exp(-|x|)), one flat elementwise pass.

Op: y = log(sigmoid(x)) on any contiguous tensor, in the overflow-free form.
Traffic: one read and one write per element, 2 * numel * elem bytes: bandwidth-bound.
Tiling: flat 1-D grid, BLOCK contiguous elements per program, last block masked, int64 offsets.
Math in fp32. Triton has no log1p, so log1p(u) for u = exp(-|x|) in (0, 1] uses the classic
correction log(w) * u / (w - 1) with w = 1 + u (exact to a few ulps; u itself when w rounds
to 1), so large positive x keep their tiny result instead of flushing to 0.
Tunables: BLOCK (power of two, 1024-8192), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "elementwise_math",
    "category": "math",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["flat_1d_grid", "tail_mask", "int64_offsets", "fp32_compute", "stable_log1p_exp",
                   "log1p_correction"],
    "tunables": {"BLOCK": [1024, 2048, 4096, 8192], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"logsigmoid_bf16": 0.1571, "logsigmoid_fp16": 0.1562, "logsigmoid_fp32": 0.2782, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _logsigmoid_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    # flat 1-D sweep, one BLOCK per program; int64 offsets so tensors past 2**31 elements do not
    # wrap
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    # log sigmoid(x) = min(x, 0) - log1p(exp(-|x|)): the exp is <= 1, so nothing overflows for
    # large |x|
    u = tl.exp(-tl.abs(x))
    w = 1.0 + u
    # log1p without a log1p: log(w) * u / (w - 1) with w = 1 + u cancels the rounding of w
    # (Goldberg's trick); when w rounds to 1, log1p(u) = u
    log1p_u = tl.where(w == 1.0, u, tl.log(w) * (u / (w - 1.0)))
    y = tl.minimum(x, 0.0) - log1p_u
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def logsigmoid(x: torch.Tensor, BLOCK: int = 4096, num_warps: int = 8) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    _logsigmoid_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=num_warps)
    return y
