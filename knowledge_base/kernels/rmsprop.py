"""One RMSprop step (PyTorch defaults: no momentum, not centred), fused: one flat pass producing (param, square_avg).

Op: v' = alpha v + (1 - alpha) g^2; p' = p - lr g / (sqrt(v') + eps).
Traffic: read p, g, v and write p', v': 5 * N * 4 bytes, bandwidth-bound.
Tiling: flat; each program handles BLOCK contiguous elements of all five streams, the last block
masked; int64 offsets. 1 - alpha is formed in double on the host and passed as fp32 (in-kernel
fp32 1 - 0.99 is off by ~2e-7 relative from the reference's constant).
Tunables: BLOCK (power of two, 512-4096), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "optimizer_step",
    "category": "optimizer",
    "dtypes": ["fp32"],
    "techniques": ["flat_1d_grid", "tail_mask", "int64_offsets", "multi_tensor_fusion", "host_side_scalars",
                   "out_of_place_update"],
    "tunables": {"BLOCK": [512, 1024, 2048, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"rmsprop_fp32": 0.8158, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}

LR, ALPHA, EPS = 1e-2, 0.99, 1e-8


@triton.jit
def _rmsprop_kernel(p_ptr, g_ptr, v_ptr, p_out, v_out, n, lr, alpha, one_minus_alpha, eps, BLOCK: tl.constexpr):
    # flat 1-D sweep, one BLOCK per program; int64 offsets
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask, other=0.0)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    v = tl.load(v_ptr + offs, mask=mask, other=0.0)
    v = alpha * v + one_minus_alpha * g * g
    tl.store(v_out + offs, v, mask=mask)
    # eps is added after the square root, as torch.optim.RMSprop does
    tl.store(p_out + offs, p - lr * g / (tl.sqrt(v) + eps), mask=mask)


def rmsprop(param: torch.Tensor, grad: torch.Tensor, square_avg: torch.Tensor, BLOCK: int = 2048,
            num_warps: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    assert param.shape == grad.shape == square_avg.shape
    param, grad, square_avg = param.contiguous(), grad.contiguous(), square_avg.contiguous()
    n = param.numel()
    p_out, v_out = torch.empty_like(param), torch.empty_like(square_avg)
    _rmsprop_kernel[(triton.cdiv(n, BLOCK),)](param, grad, square_avg, p_out, v_out, n, LR, ALPHA, 1.0 - ALPHA, EPS,
                                              BLOCK=BLOCK, num_warps=num_warps)
    return p_out, v_out
