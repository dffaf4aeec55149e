"""One SGD-with-momentum step, fused: one flat elementwise pass producing (param, momentum_buffer).

Op: d = g + wd p; buf' = mu buf + d; p' = p - lr buf' (torch.optim.SGD, dampening 0, no Nesterov).
Traffic: read p, g, buf and write p', buf': 5 * N * 4 bytes, bandwidth-bound (the unfused PyTorch
sequence makes about five passes).
Tiling: flat; each program handles BLOCK contiguous elements of all five streams, the last block
masked; int64 offsets. Hyperparameters arrive as fp32 scalars. Outputs go to new tensors: the
inputs are not updated in place.
Tunables: BLOCK (power of two, 512-4096), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "optimizer_step",
    "category": "optimizer",
    "dtypes": ["fp32"],
    "techniques": ["flat_1d_grid", "tail_mask", "int64_offsets", "multi_tensor_fusion", "out_of_place_update"],
    "tunables": {"BLOCK": [512, 1024, 2048, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"sgd_momentum_fp32": 0.8801, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}

LR, MOMENTUM, WEIGHT_DECAY = 0.1, 0.9, 1e-4


@triton.jit
def _sgd_momentum_kernel(p_ptr, g_ptr, buf_ptr, p_out, buf_out, n, lr, momentum, weight_decay,
                         BLOCK: tl.constexpr):
    # flat 1-D sweep, one BLOCK per program; int64 offsets
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask, other=0.0)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0)
    buf = tl.load(buf_ptr + offs, mask=mask, other=0.0)
    # torch.optim.SGD with momentum (no dampening, no Nesterov): weight decay joins the gradient,
    # buf = momentum * buf + d, p -= lr * buf
    d = g + weight_decay * p
    buf = momentum * buf + d
    tl.store(buf_out + offs, buf, mask=mask)
    tl.store(p_out + offs, p - lr * buf, mask=mask)


def sgd_momentum(param: torch.Tensor, grad: torch.Tensor, momentum_buffer: torch.Tensor, BLOCK: int = 2048,
                 num_warps: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    assert param.shape == grad.shape == momentum_buffer.shape
    param, grad, momentum_buffer = param.contiguous(), grad.contiguous(), momentum_buffer.contiguous()
    n = param.numel()
    p_out = torch.empty_like(param)
    buf_out = torch.empty_like(momentum_buffer)
    _sgd_momentum_kernel[(triton.cdiv(n, BLOCK),)](param, grad, momentum_buffer, p_out, buf_out, n, LR, MOMENTUM,
                                                   WEIGHT_DECAY, BLOCK=BLOCK, num_warps=num_warps)
    return p_out, buf_out
