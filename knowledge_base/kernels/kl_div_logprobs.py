"""KL(teacher || student) from log-probabilities, batchmean: a flat grid-strided fp32 sum, then a fixed-order combine.

Op: out = sum_{i, j} exp(t[i, j]) * (t[i, j] - s[i, j]) / M for s, t of shape [M, V]; 0-d fp32.
Traffic: s and t read once each (2 * M * V * elem): bandwidth-bound. The sum does not care about
rows (the batchmean divides the grand total by M), so the two tensors are walked as flat arrays:
the parallelism does not depend on M, and a 32-row decode batch still fills the GPU.
Tiling: kernel 1 launches P = min(cdiv(M * V, BLOCK), MAX_PROGRAMS) programs, each taking blocks
p, p + P, ... of BLOCK contiguous elements (last block masked), accumulating exp(t) * (t - s) in
fp32 per lane; kernel 2 adds the P partials in a fixed order and divides by M. exp(t) <= 1 for
log-probabilities, and exp of -1000 underflows cleanly to 0 (0 * finite = 0). Offsets int64.
Tunables: BLOCK (power of two, 1024-8192), MAX_PROGRAMS (256-4096), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "global_reduction_loss",
    "category": "loss",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["flatten_rows_for_parallelism", "grid_stride_loop", "per_lane_accumulators",
                   "two_stage_deterministic_reduction", "fp32_accumulation", "tail_mask", "int64_offsets"],
    "tunables": {"BLOCK": [1024, 2048, 4096, 8192], "MAX_PROGRAMS": [256, 1024, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"kl_div_logprobs_bf16": 0.8033, "kl_div_logprobs_fp16": 0.8311, "kl_div_logprobs_fp32": 0.9847, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _kl_partial_kernel(s_ptr, t_ptr, part_ptr, n, iters, BLOCK: tl.constexpr):
    # grid-stride loop over the flattened [M, V] inputs: at most MAX_PROGRAMS programs, block pid,
    # pid + nprog, ...
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for it in range(0, iters):
        idx = (it * nprog + pid).to(tl.int64) * BLOCK + offs
        mask = idx < n
        s = tl.load(s_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        t = tl.load(t_ptr + idx, mask=mask, other=0.0).to(tl.float32)
        # inputs are log-probabilities: p_t * (log p_t - log p_s), summed in fp32
        acc += tl.where(mask, tl.exp(t) * (t - s), 0.0)
    # one partial per program, added by a single program in a fixed order
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def _kl_combine_kernel(part_ptr, out_ptr, P, inv_m, BLOCK_P: tl.constexpr):
    offs = tl.arange(0, BLOCK_P)
    acc = tl.zeros([BLOCK_P], tl.float32)
    for start in range(0, P, BLOCK_P):
        idx = start + offs
        acc += tl.load(part_ptr + idx, mask=idx < P, other=0.0)
    # batchmean: the total divided by the number of rows M, not elements
    tl.store(out_ptr, tl.sum(acc, axis=0) * inv_m)


def kl_div_logprobs(student_logp: torch.Tensor, teacher_logp: torch.Tensor, BLOCK: int = 4096,
                    MAX_PROGRAMS: int = 1024, num_warps: int = 8) -> torch.Tensor:
    assert student_logp.shape == teacher_logp.shape and student_logp.dim() == 2
    M = student_logp.shape[0]
    s = student_logp.contiguous().view(-1)
    t = teacher_logp.contiguous().view(-1)
    n = s.numel()
    block = min(BLOCK, triton.next_power_of_2(max(n, 1)))
    n_blocks = triton.cdiv(n, block)
    progs = max(1, min(n_blocks, MAX_PROGRAMS))
    iters = triton.cdiv(n_blocks, progs)
    partial = torch.empty((progs,), dtype=torch.float32, device=s.device)
    out = torch.empty((), dtype=torch.float32, device=s.device)
    _kl_partial_kernel[(progs,)](s, t, partial, n, iters, BLOCK=block, num_warps=num_warps)
    _kl_combine_kernel[(1,)](partial, out, progs, 1.0 / M, BLOCK_P=min(1024, triton.next_power_of_2(progs)),
                             num_warps=4)
    return out
