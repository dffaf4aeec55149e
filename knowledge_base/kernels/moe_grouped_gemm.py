"""Grouped MoE GEMM with a device-side tile schedule: y[rows of e] = x[rows of e] @ w[e]^T.

Op: x[T, K] sorted by expert, expert_offsets[E + 1] int32 on the device, w[E, N, K]; y[T, N].
Traffic: minimal is x + the weights of experts that have rows + y. Prefill groups are hundreds
of rows (compute-bound, like a dense GEMM per expert); decode groups are 1-8 rows, bound by
streaming each active expert's weight once.
Schedule: the grid is (cdiv(T, BLOCK_M) + E, tiles_n) -- an upper bound on the row tiles of all
groups, since sum_e cdiv(n_e, BM) <= T / BM + E -- so nothing is copied to the host. Each program
loads the E + 1 offsets as a vector, computes every group's tile count and their inclusive
cumsum, and finds its expert as the number of groups whose tiles end at or before its row-tile
id; ids past the last tile return at once. Idle experts have zero tiles, so their weights are
never touched.
Tiling: a BLOCK_M x BLOCK_N tile of one group, K walked with tl.dot (fp32 accumulator, IEEE for
fp32); w[e] is read [BLOCK_K, BLOCK_N] k-contiguous (coalesced, K-major B operand). Rows past the
group end are masked, so a tile never mixes experts. Row and expert offsets are int64.
Tunables: BLOCK_M (16 for decode-sized groups, 64-128 prefill; the wrapper picks by T / E),
BLOCK_N (64-128), BLOCK_K (32-128), num_warps, num_stages.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "grouped_gemm",
    "category": "matmul",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["grouped_gemm", "device_side_tile_schedule", "no_host_sync", "cumsum_group_lookup",
                   "nt_layout", "fp32_accumulator", "edge_masks", "int64_offsets", "ieee_fp32_dot"],
    "tunables": {"BLOCK_M": [16, 32, 64, 128], "BLOCK_N": [64, 128], "BLOCK_K": [32, 64, 128],
                 "num_warps": [4, 8], "num_stages": [2, 3, 4]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"moe_grouped_gemm_bf16": 0.7595, "moe_grouped_gemm_fp16": 0.7306, "moe_grouped_gemm_fp32": 0.2002, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _moe_gemm_kernel(x_ptr, w_ptr, off_ptr, y_ptr, N, K, E, stride_xt, stride_we, stride_wn, stride_yt,
                     E_PAD: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     IEEE_FP32: tl.constexpr):
    # axis 0: a row tile of some expert's group of tokens (tokens arrive sorted by expert; expert e
    # owns rows offsets[e]..offsets[e+1]); axis 1: a column tile of N. One launch covers every
    # expert, however uneven their loads
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    # -- which group and which row tile of it: a cumsum over the groups' tile counts
    e_idx = tl.arange(0, E_PAD)
    e_ok = e_idx < E
    starts = tl.load(off_ptr + e_idx, mask=e_ok, other=0)
    ends = tl.load(off_ptr + e_idx + 1, mask=e_ok, other=0)
    # each expert's row tiles (an empty expert has 0); their running sum maps a program id to
    # (expert, tile within it)
    tiles = (ends - starts + BLOCK_M - 1) // BLOCK_M
    tiles_end = tl.cumsum(tiles, 0)
    # the expert whose tile range holds pid_m: the number of experts whose tiles all end at or
    # before it
    expert = tl.sum((tiles_end <= pid_m).to(tl.int32), 0)
    # the grid is padded by E tiles (a partial tile per expert at most): spare programs exit
    if expert < E:
        mine = e_idx == expert
        first_tile = tl.sum(tl.where(mine, tiles_end - tiles, 0), 0)
        row_start = tl.sum(tl.where(mine, starts, 0), 0) + (pid_m - first_tile) * BLOCK_M
        row_end = tl.sum(tl.where(mine, ends, 0), 0)

        offs_m = row_start + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_k = tl.arange(0, BLOCK_K)
        # rows past this expert's last token belong to the next expert: masked on load and store
        m_mask = offs_m[:, None] < row_end
        n_mask = offs_n[None, :] < N
        x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xt + offs_k[None, :]
        # this expert's weight, [N, K] row-major, read as [BLOCK_K, BLOCK_N] tiles of its transpose
        w_ptrs = (w_ptr + expert.to(tl.int64) * stride_we + offs_n[None, :].to(tl.int64) * stride_wn
                  + offs_k[:, None])
        # fp32 accumulator
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            # K tail zero-filled on both operands
            k_ok = (k0 + offs_k) < K
            x = tl.load(x_ptrs, mask=m_mask & k_ok[None, :], other=0.0)
            w = tl.load(w_ptrs, mask=k_ok[:, None] & n_mask, other=0.0)
            if IEEE_FP32:
                acc = tl.dot(x, w, acc, input_precision="ieee")
            else:
                acc = tl.dot(x, w, acc)
            x_ptrs += BLOCK_K
            w_ptrs += BLOCK_K
        y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_yt + offs_n[None, :]
        tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=m_mask & n_mask)


def moe_grouped_gemm(x: torch.Tensor, w: torch.Tensor, expert_offsets: torch.Tensor, BLOCK_M: int = 0,
                     BLOCK_N: int = 128, BLOCK_K: int = 64, num_warps: int = 8, num_stages: int = 3) -> torch.Tensor:
    assert x.dim() == 2 and w.dim() == 3 and x.shape[1] == w.shape[2] and x.dtype == w.dtype
    x = x.contiguous()
    w = w.contiguous()
    offsets = expert_offsets.contiguous()
    T, K = x.shape
    E, N = w.shape[0], w.shape[1]
    # the row tile follows the average tokens per expert: small groups (decode, many experts) waste
    # less of a small tile
    if BLOCK_M <= 0:  # average rows per expert decides the row tile
        per_expert = T // max(E, 1)
        BLOCK_M = 16 if per_expert <= 16 else 32 if per_expert <= 48 else 64 if per_expert <= 256 else 128
    if BLOCK_M <= 32:
        BLOCK_N, num_warps, num_stages = 64, 4, 4
    if x.dtype == torch.float32:
        BLOCK_K = min(BLOCK_K, 32)
    y = torch.empty((T, N), dtype=x.dtype, device=x.device)
    # an upper bound on the total row tiles: sum over experts of ceil(rows_e / BLOCK_M) <= ceil(T /
    # BLOCK_M) + E
    grid = (triton.cdiv(T, BLOCK_M) + E, triton.cdiv(N, BLOCK_N))
    _moe_gemm_kernel[grid](x, w, offsets, y, N, K, E, x.stride(0), w.stride(0), w.stride(1), y.stride(0),
                           E_PAD=max(16, triton.next_power_of_2(E)), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                           BLOCK_K=BLOCK_K, IEEE_FP32=x.dtype == torch.float32, num_warps=num_warps,
                           num_stages=num_stages)
    return y
