"""Decode GEMM y = x @ w^T for M = 1..32 rows: one row tile, N tiles x deterministic split-K.

Op: y[M, N] = x[M, K] @ w[N, K]^T, one dtype, fp32 accumulation, M <= 32.
Traffic: w (N * K * elem) is everything; x and y are tiny. The roofline is the time to stream w
once at HBM bandwidth, so the kernel must (1) read w exactly once -- one row tile of x covers all
M rows (BLOCK_M = max(16, next_pow2(M)); 16 is tl.dot's smallest M, the padded rows are masked
loads that cost no DRAM traffic) -- and (2) keep every SM streaming. With BLOCK_N = 64 the
Qwen2-7B down projection has only 56 column tiles for 132 SMs, so K is split: grid
(tiles_n, SPLIT_K), each program reduces a K slice into an fp32 [M, BLOCK_N] partial written to a
[SPLIT_K, M, N] workspace, and a second kernel sums the slices in a fixed order (bit-identical
run to run; atomics would not be). SPLIT_K = 1 writes y directly.
w tiles are loaded [BLOCK_K, BLOCK_N] with k contiguous (coalesced, K-major B for tl.dot).
fp32 uses input_precision="ieee".
Tunables: BLOCK_N (32-128), BLOCK_K (64-256), SPLIT_K (auto: enough programs for ~2 waves),
num_warps (4), num_stages (3-5).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gemm",
    "category": "matmul",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["decode_gemm", "single_row_tile", "split_k", "deterministic_reduction", "nt_layout",
                   "fp32_accumulator", "k_tail_mask", "edge_masks", "ieee_fp32_dot"],
    "tunables": {"BLOCK_N": [32, 64, 128], "BLOCK_K": [64, 128, 256], "SPLIT_K": [1, 2, 4, 8, 16],
                 "num_warps": [4], "num_stages": [3, 4, 5]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"skinny_gemm_bf16": 0.7964, "skinny_gemm_fp16": 0.706, "skinny_gemm_fp32": 0.167, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _skinny_kernel(x_ptr, w_ptr, out_ptr, M, N, K, K_PER_SPLIT, stride_xm, stride_wn, stride_os, stride_om,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, IEEE_FP32: tl.constexpr):
    # decode GEMM (M <= 32): the whole M fits in one row tile, so programs split N (axis 0) and K
    # (axis 1) instead; the weight stream is what costs
    pid_n = tl.program_id(0)
    split = tl.program_id(1)
    # every program holds all M rows (BLOCK_M >= M, a power of two >= 16 for tl.dot)
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_mask = offs_m[:, None] < M
    n_mask = offs_n[None, :] < N
    # this program's K slice; the last may be short
    k_start = split * K_PER_SPLIT
    k_end = tl.minimum(k_start + K_PER_SPLIT, K)
    # w is [N, K] row-major: read as a [BLOCK_K, BLOCK_N] tile of w.T by index roles
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + (k_start + offs_k)[None, :]
    w_ptrs = w_ptr + offs_n[None, :].to(tl.int64) * stride_wn + (k_start + offs_k)[:, None]

    # fp32 partial sum of this K slice
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(k_start, k_end, BLOCK_K):
        # mask against the end of this split, not K
        k_ok = (k0 + offs_k) < k_end
        x = tl.load(x_ptrs, mask=m_mask & k_ok[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=k_ok[:, None] & n_mask, other=0.0)
        if IEEE_FP32:
            acc = tl.dot(x, w, acc, input_precision="ieee")
        else:
            acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

    # with one split this writes y directly (cast to y's dtype); with several, an fp32 workspace
    # row per split
    o_ptrs = out_ptr + split.to(tl.int64) * stride_os + offs_m[:, None] * stride_om + offs_n[None, :]
    tl.store(o_ptrs, acc.to(out_ptr.dtype.element_ty), mask=m_mask & n_mask)


@triton.jit
def _sum_splits_kernel(ws_ptr, y_ptr, MN, SPLIT_K: tl.constexpr, BLOCK: tl.constexpr):
    # second pass over the M*N outputs: splits summed in a fixed order, not atomics, so every run
    # rounds the same way
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < MN
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in tl.static_range(SPLIT_K):  # fixed order: the same rounding every run
        acc += tl.load(ws_ptr + s * MN + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, acc.to(y_ptr.dtype.element_ty), mask=mask)


def skinny_gemm(x: torch.Tensor, w: torch.Tensor, BLOCK_N: int = 64, BLOCK_K: int = 128, SPLIT_K: int = 0,
                num_warps: int = 4, num_stages: int = 4, target_programs: int = 264) -> torch.Tensor:
    assert x.dim() == 2 and w.dim() == 2 and x.shape[1] == w.shape[1] and x.dtype == w.dtype
    assert x.shape[0] <= 32, "skinny_gemm covers decode batches of at most 32 rows"
    x = x.contiguous()
    w = w.contiguous()
    M, K = x.shape
    N = w.shape[0]
    BLOCK_M = max(16, triton.next_power_of_2(M))
    if x.dtype == torch.float32:
        BLOCK_K = min(BLOCK_K, 64)
    tiles_n = triton.cdiv(N, BLOCK_N)
    k_blocks = triton.cdiv(K, BLOCK_K)
    if SPLIT_K <= 0:  # enough programs for about two waves, at least 4 K blocks per split
        SPLIT_K = max(1, min(triton.cdiv(target_programs, tiles_n), k_blocks // 4, 16))
    k_per_split = triton.cdiv(k_blocks, SPLIT_K) * BLOCK_K
    SPLIT_K = triton.cdiv(K, k_per_split)
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    ieee = x.dtype == torch.float32
    # one split: no workspace, no second pass
    if SPLIT_K == 1:
        _skinny_kernel[(tiles_n, 1)](x, w, y, M, N, K, k_per_split, x.stride(0), w.stride(0), 0, y.stride(0),
                                     BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, IEEE_FP32=ieee,
                                     num_warps=num_warps, num_stages=num_stages)
        return y
    ws = torch.empty((SPLIT_K, M, N), dtype=torch.float32, device=x.device)
    _skinny_kernel[(tiles_n, SPLIT_K)](x, w, ws, M, N, K, k_per_split, x.stride(0), w.stride(0), ws.stride(0),
                                       ws.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                                       IEEE_FP32=ieee, num_warps=num_warps, num_stages=num_stages)
    BLOCK = 1024
    _sum_splits_kernel[(triton.cdiv(M * N, BLOCK),)](ws, y, M * N, SPLIT_K=SPLIT_K, BLOCK=BLOCK)
    return y
