"""Dense GEMM C = A @ B with an fp32 accumulator, grouped tile order.

Op: C[M, N] = A[M, K] @ B[K, N], all in one dtype (fp32 / fp16 / bf16), fp32 accumulation.
Traffic and bound: minimal traffic is (M*K + K*N + M*N) * elem; FLOPs 2*M*N*K. Prefill shapes
(M in the thousands) are compute-bound on tensor cores; decode shapes (M = 13..32) are
bandwidth-bound on reading B once.
Tiling: each program owns a BLOCK_M x BLOCK_N tile of C and walks K in BLOCK_K steps with
tl.dot into an fp32 accumulator; the K tail and the M/N edges are masked (zero-filled loads,
masked stores). Programs are ordered in groups of GROUP_M tile-rows so that consecutive programs
reuse the same B columns and A rows from L2. Row offsets are int64. fp32 inputs use
input_precision="ieee": TF32 would be 8x faster but changes the answer (the task forbids it).
On the Triton CPU interpreter bf16 tl.dot is wrong; fp32/fp16 are exact there.
Tunables: BLOCK_M, BLOCK_N (64-256), BLOCK_K (32-128), GROUP_M (4-16), num_warps (4-8),
num_stages (2-5). Decode shapes prefer small BLOCK_M (16) and larger BLOCK_N/num_stages.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gemm",
    "category": "matmul",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": [
        "tiled_gemm",
        "fp32_accumulator",
        "grouped_tile_order",
        "k_tail_mask",
        "edge_masks",
        "int64_offsets",
        "ieee_fp32_dot",
    ],
    "tunables": {
        "BLOCK_M": [16, 64, 128, 256],
        "BLOCK_N": [64, 128, 256],
        "BLOCK_K": [32, 64, 128],
        "GROUP_M": [4, 8, 16],
        "num_warps": [4, 8],
        "num_stages": [2, 3, 4, 5],
    },
    "verified_on": ["NVIDIA H200"],
    "attainment": {"matmul_bf16": 0.7185, "matmul_fp16": 0.6551, "matmul_fp32": 0.4791, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    IEEE_FP32: tl.constexpr,
):
    # one program per BLOCK_M x BLOCK_N tile of C, on a 1-D grid that the lines below remap to
    # (pid_m, pid_n)
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # grouped order: GROUP_M tile-rows are swept together, column by column
    per_group = GROUP_M * tiles_n
    group = pid // per_group
    first_m = group * GROUP_M
    rows_in_group = tl.minimum(tiles_m - first_m, GROUP_M)
    # within a group, consecutive pids walk down the group's tile-rows first, so the programs in
    # flight share one column strip of B (and the group's rows of A) in L2; the last group may hold
    # fewer than GROUP_M rows
    pid_m = first_m + (pid % per_group) % rows_in_group
    pid_n = (pid % per_group) // rows_in_group

    # row / column / depth indices of this tile; the row index is widened to int64 before it meets
    # a stride, so M*stride past 2**31 elements cannot wrap
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * stride_bk + offs_n[None, :] * stride_bn
    # edge masks: the last tile-row / tile-column may hang past M / N
    m_mask = offs_m[:, None] < M
    n_mask = offs_n[None, :] < N

    # fp32 accumulator whatever the input dtype: fp16/bf16 partial sums would lose digits over K
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        # K tail: out-of-range depth reads 0 on both sides, and 0 * 0 adds nothing to the dot
        k_ok = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=m_mask & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & n_mask, other=0.0)
        # fp32 inputs: full-precision products (tl.dot would use TF32 by default, which changes the
        # answer)
        if IEEE_FP32:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
        # advance both tiles one BLOCK_K step along K
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    # round once to the output dtype, store only the in-range part of the tile
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=m_mask & n_mask)


def matmul(
    a: torch.Tensor,
    b: torch.Tensor,
    BLOCK_M: int = 128,
    BLOCK_N: int = 128,
    BLOCK_K: int = 64,
    GROUP_M: int = 8,
    num_warps: int = 8,
    num_stages: int = 3,
) -> torch.Tensor:
    assert a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[0] and a.dtype == b.dtype
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _matmul_kernel[grid](
        a,
        b,
        c,
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        GROUP_M=GROUP_M,
        IEEE_FP32=a.dtype == torch.float32,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return c
