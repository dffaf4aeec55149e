"""Mean squared error over whole tensors: grid-strided fp32 partial sums, then one fixed-order combine.

Op: out = sum((x - y)^2) / numel over x, y of any (equal) shape; 0-d fp32 output.
Traffic: x and y read once each (2 * numel * elem); the partials are noise: bandwidth-bound.
Tiling: kernel 1 launches P = min(cdiv(numel, BLOCK), MAX_PROGRAMS) programs; program p takes the
BLOCK-element blocks p, p + P, ... (contiguous, coalesced, last block masked), forms the difference
and its square in fp32, and keeps per-lane accumulators (each lane sums only a few dozen terms,
so fp32 does not stagnate); it writes one partial. Kernel 2, a single program, adds the P
partials in a fixed order and divides by numel. No atomics: bitwise reproducible. int64 offsets.
Tunables: BLOCK (power of two, 1024-8192), MAX_PROGRAMS (256-4096), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "global_reduction_loss",
    "category": "loss",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["grid_stride_loop", "per_lane_accumulators", "two_stage_deterministic_reduction",
                   "fp32_accumulation", "tail_mask", "int64_offsets"],
    "tunables": {"BLOCK": [1024, 2048, 4096, 8192], "MAX_PROGRAMS": [256, 1024, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"mse_loss_bf16": 0.1773, "mse_loss_fp16": 0.1539, "mse_loss_fp32": 0.7039, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _sq_err_partial_kernel(x_ptr, y_ptr, part_ptr, n, iters, BLOCK: tl.constexpr):
    # at most MAX_PROGRAMS programs, each walking blocks pid, pid + nprog, ... (a grid-stride
    # loop), so at each step the programs read adjacent blocks
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for it in range(0, iters):
        idx = (it * nprog + pid).to(tl.int64) * BLOCK + offs
        mask = idx < n
        x = tl.load(x_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        y = tl.load(y_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        d = x - y
        # fp32 per-lane sum of squared differences, folded once after the loop
        acc += d * d
    # one partial per program; a single program adds them in a fixed order and scales by 1/n
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def _mean_combine_kernel(part_ptr, out_ptr, P, inv_n, BLOCK_P: tl.constexpr):
    offs = tl.arange(0, BLOCK_P)
    acc = tl.zeros([BLOCK_P], tl.float32)
    for start in range(0, P, BLOCK_P):
        idx = start + offs
        acc += tl.load(part_ptr + idx, mask=idx < P, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) * inv_n)


def mse_loss(x: torch.Tensor, y: torch.Tensor, BLOCK: int = 4096, MAX_PROGRAMS: int = 1024,
             num_warps: int = 8) -> torch.Tensor:
    assert x.shape == y.shape
    x = x.contiguous().view(-1)
    y = y.contiguous().view(-1)
    n = x.numel()
    block = min(BLOCK, triton.next_power_of_2(max(n, 1)))
    n_blocks = triton.cdiv(n, block)
    progs = max(1, min(n_blocks, MAX_PROGRAMS))
    iters = triton.cdiv(n_blocks, progs)
    partial = torch.empty((progs,), dtype=torch.float32, device=x.device)
    out = torch.empty((), dtype=torch.float32, device=x.device)
    _sq_err_partial_kernel[(progs,)](x, y, partial, n, iters, BLOCK=block, num_warps=num_warps)
    _mean_combine_kernel[(1,)](partial, out, progs, 1.0 / n, BLOCK_P=min(1024, triton.next_power_of_2(progs)),
                               num_warps=4)
    return out
