"""Squared ReLU, max(x, 0)^2, one flat elementwise pass.

Op: y = relu(x)^2 on any contiguous tensor; the square is formed in fp32 and rounded once.
Traffic: one read and one write per element, 2 * numel * elem bytes: bandwidth-bound.
Tiling: flat 1-D grid, BLOCK contiguous elements per program, last block masked, int64 offsets.
Squares beyond the fp16 range become +inf on the cast, exactly as the fp32 reference's do.
Tunables: BLOCK (power of two, 1024-8192), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "elementwise_activation",
    "category": "activation",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["flat_1d_grid", "tail_mask", "int64_offsets", "fp32_compute"],
    "tunables": {"BLOCK": [1024, 2048, 4096, 8192], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"relu_squared_bf16": 0.9169, "relu_squared_fp16": 0.9126, "relu_squared_fp32": 0.9173, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _relu_squared_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    # flat 1-D sweep, one BLOCK per program; int64 offsets so tensors past 2**31 elements do not
    # wrap
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.maximum(x, 0.0)
    tl.store(y_ptr + offs, (r * r).to(y_ptr.dtype.element_ty), mask=mask)


def relu_squared(x: torch.Tensor, BLOCK: int = 4096, num_warps: int = 8) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    _relu_squared_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK, num_warps=num_warps)
    return y
