"""Fused SGD-with-momentum step: one in-place elementwise pass over params, grads and momentum.

Op (torch.optim.SGD semantics, dampening 0, nesterov False):
    d = g + weight_decay * p
    buf = d                      on the first step, else  buf = momentum * buf + d
    p = p - lr * buf
p and g in the parameter dtype (fp32, or bf16 with the math in fp32), buf fp32. All updates in place.
Traffic: read p, g, buf; write p, buf: 5 passes over the parameter count (fp32: 20 bytes per
parameter). PyTorch's for-each path issues several elementwise kernels with temporaries; one fused
kernel sits at the bandwidth roofline.
Tiling: a flat 1-D grid over the flattened parameter, int64 offsets, one tail mask. In-place
stores use the same offsets as the loads, so no program reads what another writes: no race.
Scalars (lr, momentum, weight decay, first-step flag) are kernel arguments, not tensors; FIRST is a
constexpr so the first-step variant compiles without the buf load.
Multi-tensor: a model has thousands of parameter tensors; launching this once per tensor is
launch-bound (a few us each). Production code packs (pointer, numel) tables and lets each program
find its tensor -- the same body applies.
Autotuning warning: the kernel mutates its inputs; a tuner that runs it repeatedly must restore them
(`restore_value=["p_ptr", "buf_ptr"]`), or the step is applied many times.
Tunables: BLOCK (1024-4096), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "fused_optimizer",
    "category": "optimizer",
    "dtypes": ["fp32", "bf16"],
    "techniques": [
        "flat_1d_grid",
        "in_place_update",
        "tail_mask",
        "int64_offsets",
        "fp32_compute",
        "scalar_hyperparameters",
        "constexpr_specialization",
    ],
    "tunables": {"BLOCK": [1024, 2048, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"100M fp32 params": 0.8729, "source": "docs/results/templates_h200.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
    "template": True,
}


@triton.jit
def _sgd_momentum_kernel(
    p_ptr, g_ptr, buf_ptr, n, lr, momentum, weight_decay, FIRST: tl.constexpr, BLOCK: tl.constexpr
):
    # flat 1-D sweep; each element is read and written by one program only, so updating p and buf
    # in place is safe
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # p and g are upcast to fp32 whatever their dtype; buf is fp32 (asserted)
    p = tl.load(p_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    d = g + weight_decay * p
    # torch's first step sets buf = d: the buffer is written, not read
    if FIRST:
        buf = d
    else:
        buf = momentum * tl.load(buf_ptr + offs, mask=mask, other=0.0) + d
    tl.store(buf_ptr + offs, buf, mask=mask)
    tl.store(p_ptr + offs, (p - lr * buf).to(p_ptr.dtype.element_ty), mask=mask)


def sgd_momentum_step(
    p: torch.Tensor,
    g: torch.Tensor,
    buf: torch.Tensor,
    lr: float,
    momentum: float = 0.9,
    weight_decay: float = 0.0,
    first_step: bool = False,
    BLOCK: int = 2048,
) -> None:
    """Update p and buf (fp32) in place; all three must be contiguous with the same numel."""
    assert p.is_contiguous() and g.is_contiguous() and buf.is_contiguous(), (
        "in-place update needs contiguous tensors"
    )
    assert p.numel() == g.numel() == buf.numel() and buf.dtype == torch.float32
    n = p.numel()
    _sgd_momentum_kernel[(triton.cdiv(n, BLOCK),)](
        p, g, buf, n, lr, momentum, weight_decay, FIRST=first_step, BLOCK=BLOCK, num_warps=4
    )
