"""Row mean and biased variance in one read: per-chunk two-pass statistics merged with Chan's formula.

Op: mean[i] = sum_j x[i, j] / N and var[i] = sum_j (x[i, j] - mean[i])^2 / N; fp32 outputs [M].
Traffic: x read exactly once (M * N * elem) plus 8 * M bytes written (and a small fp32 scratch of
3 * M * SPLIT partials): bandwidth-bound. A plain two-pass kernel reads each row twice, which for
GroupNorm rows of 160k elements no longer hits L2.
Tiling: kernel 1 runs a 2-D grid (row, split): each row is cut into SPLIT slabs of SLAB elements,
so 64 GroupNorm rows of 163840 still make 640 programs (one program per row would leave most
of an H200's 132 SMs idle). A program walks its slab in BLOCK_N chunks (tail masked); each chunk,
while in registers, yields its count, mean and centred sum of squares M2 (a two-pass over
registers, so no E[x^2] - E[x]^2 cancellation even when |mean| >> std), merged into the running
(n, mean, M2) with Chan's update: delta = mean_b - mean_a, mean += delta * n_b / n,
M2 += M2_b + delta^2 * n_a * n_b / n. Kernel 2 merges each row's SPLIT partials the same way, in
a fixed order (no atomics: reproducible). Everything fp32; row offsets int64.
Tunables: BLOCK_N (power of two, 1024-8192), SLAB (elements per program, a multiple of BLOCK_N),
num_warps (4-16).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "row_reduction",
    "category": "reduce",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["split_row_reduction", "chunked_row_loop", "tail_mask", "chan_welford_merge",
                   "in_register_two_pass", "two_stage_deterministic_reduction", "fp32_accumulation",
                   "int64_offsets"],
    "tunables": {"BLOCK_N": [1024, 2048, 4096, 8192], "SLAB": [8192, 16384, 32768], "num_warps": [4, 8, 16]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"row_mean_var_bf16": 0.0846, "row_mean_var_fp16": 0.1316, "row_mean_var_fp32": 0.3976, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _partial_stats_kernel(x_ptr, cnt_ptr, mean_ptr, m2_ptr, N, SLAB, SPLIT, BLOCK_N: tl.constexpr):
    # axis 0: a row; axis 1: a slab of SLAB columns, so a few long rows still spread over the SMs
    row = tl.program_id(0)
    split = tl.program_id(1)
    x_row = x_ptr + row.to(tl.int64) * N
    lo = split * SLAB
    hi = tl.minimum(lo + SLAB, N)
    offs = tl.arange(0, BLOCK_N)
    # running (count, mean, M2) of the slab so far, fp32
    n_a = 0.0
    mean_a = 0.0
    m2_a = 0.0
    for start in range(lo, hi, BLOCK_N):
        cols = start + offs
        mask = cols < hi
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        # each chunk's own count, mean and M2 (deviations from the chunk mean, masked lanes zeroed)
        n_b = tl.minimum(hi - start, BLOCK_N).to(tl.float32)
        mean_b = tl.sum(x, axis=0) / n_b
        d = tl.where(mask, x - mean_b, 0.0)
        m2_b = tl.sum(d * d, axis=0)
        # Chan's parallel merge of two (count, mean, M2) triples: no E[x^2] - E[x]^2 cancellation
        n = n_a + n_b
        delta = mean_b - mean_a
        mean_a = mean_a + delta * (n_b / n)
        m2_a = m2_a + m2_b + delta * delta * (n_a * n_b / n)
        n_a = n
    out = row.to(tl.int64) * SPLIT + split
    tl.store(cnt_ptr + out, n_a)
    tl.store(mean_ptr + out, mean_a)
    tl.store(m2_ptr + out, m2_a)


@triton.jit
def _merge_stats_kernel(cnt_ptr, mean_ptr, m2_ptr, mean_out, var_out, SPLIT):
    row = tl.program_id(0)
    # one program per row merges its slabs in order with the same formula; var = M2 / n is the
    # population variance
    base = row.to(tl.int64) * SPLIT
    n_a = tl.load(cnt_ptr + base)
    mean_a = tl.load(mean_ptr + base)
    m2_a = tl.load(m2_ptr + base)
    for s in range(1, SPLIT):
        n_b = tl.load(cnt_ptr + base + s)
        mean_b = tl.load(mean_ptr + base + s)
        m2_b = tl.load(m2_ptr + base + s)
        n = n_a + n_b
        delta = mean_b - mean_a
        mean_a = mean_a + delta * (n_b / n)
        m2_a = m2_a + m2_b + delta * delta * (n_a * n_b / n)
        n_a = n
    tl.store(mean_out + row, mean_a)
    tl.store(var_out + row, m2_a / n_a)


def row_mean_var(x: torch.Tensor, BLOCK_N: int = 4096, SLAB: int = 16384,
                 num_warps: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    assert x.dim() == 2
    x = x.contiguous()
    M, N = x.shape
    block = min(BLOCK_N, triton.next_power_of_2(N))
    # a slab is a whole number of blocks
    slab = max(block, SLAB // block * block)
    split = triton.cdiv(N, slab)
    dev = x.device
    cnt = torch.empty((M, split), dtype=torch.float32, device=dev)
    part_mean = torch.empty((M, split), dtype=torch.float32, device=dev)
    part_m2 = torch.empty((M, split), dtype=torch.float32, device=dev)
    mean = torch.empty((M,), dtype=torch.float32, device=dev)
    var = torch.empty((M,), dtype=torch.float32, device=dev)
    _partial_stats_kernel[(M, split)](x, cnt, part_mean, part_m2, N, slab, split, BLOCK_N=block, num_warps=num_warps)
    _merge_stats_kernel[(M,)](cnt, part_mean, part_m2, mean, var, split, num_warps=1)
    return mean, var
