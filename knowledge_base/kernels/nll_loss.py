"""Mean NLL with ignore_index: one program gathers logp[i, t[i]] for every row and reduces in fixed order.

Op: out = -sum_{valid i} logp[i, t[i]] / n_valid, valid = (t[i] != -100); 0-d fp32 output.
Traffic: the minimum is M targets (int64) plus one logp element per row -- M * (8 + elem) bytes,
never the M * V matrix. Each picked element costs a 32-byte DRAM sector, so the real traffic is
~M * 40 bytes: tiny, and the op is launch-bound at every realistic M.
Tiling: a single program walks the rows in BLOCK_M chunks: loads the targets, forms the int64
address i * V + t[i] for valid rows (padding rows are masked and never dereferenced), gathers,
and keeps per-lane fp32 sums of -logp and of the valid count; the final tree sum and the divide
happen once. No atomics, one launch: deterministic. For M in the hundreds of thousands, split the
rows over programs and add a combine kernel.
Tunables: BLOCK_M (power of two, 256-4096), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gather_reduction_loss",
    "category": "loss",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["sparse_row_gather", "ignore_index", "single_program_reduction", "fp32_accumulation",
                   "int64_offsets"],
    "tunables": {"BLOCK_M": [256, 1024, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"nll_loss_bf16": 0.0004, "nll_loss_fp16": 0.0003, "nll_loss_fp32": 0.0005, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}

IGNORE_INDEX = -100


@triton.jit
def _nll_kernel(logp_ptr, t_ptr, out_ptr, M, V, ignore_index, BLOCK_M: tl.constexpr):
    # one scalar per row is little work: a single program walks all M rows in BLOCK_M chunks, so
    # the sum needs no second pass and has a fixed order
    offs = tl.arange(0, BLOCK_M)
    acc = tl.zeros([BLOCK_M], tl.float32)
    cnt = tl.zeros([BLOCK_M], tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + offs
        in_range = rows < M
        t = tl.load(t_ptr + rows, mask=in_range, other=ignore_index)
        valid = in_range & (t != ignore_index)
        # the target's log-probability, one gathered element per row; ignored and out-of-range rows
        # point at column 0 and their load is masked off
        addr = rows.to(tl.int64) * V + tl.where(valid, t, 0)
        picked = tl.load(logp_ptr + addr, mask=valid, other=0.0).to(tl.float32)
        acc += tl.where(valid, -picked, 0.0)
        cnt += valid.to(tl.float32)
    # mean over the rows whose target is not ignore_index
    tl.store(out_ptr, tl.sum(acc, axis=0) / tl.sum(cnt, axis=0))


def nll_loss(logp: torch.Tensor, targets: torch.Tensor, BLOCK_M: int = 1024, num_warps: int = 4) -> torch.Tensor:
    assert logp.dim() == 2 and targets.shape == (logp.shape[0],)
    logp = logp.contiguous()
    targets = targets.contiguous()
    M, V = logp.shape
    out = torch.empty((), dtype=torch.float32, device=logp.device)
    block = min(BLOCK_M, triton.next_power_of_2(M))
    _nll_kernel[(1,)](logp, targets, out, M, V, IGNORE_INDEX, BLOCK_M=block, num_warps=num_warps)
    return out
