"""y = x @ w^T (nn.Linear without bias), reading w[N, K] in its stored, K-contiguous layout.

Op: y[M, N] = x[M, K] @ w[N, K]^T, one dtype (fp32 / fp16 / bf16), fp32 accumulation.
Traffic: minimal is (M*K + N*K + M*N) * elem. Prefill shapes are compute-bound; the decode shape
(M = 64) is bound by reading w once.
Tiling: each program owns a BLOCK_M x BLOCK_N tile of y (grouped tile order for L2 reuse) and
walks K. The w tile is loaded as [BLOCK_K, BLOCK_N] with k fastest in memory: every row n of w
is a contiguous K run, so the loads coalesce along k and tl.dot gets a "K-major" B operand,
which the Hopper tensor-core path takes without a transpose in shared memory. No copy of w^T is
ever made. Edges and the K tail are masked; row offsets are int64. fp32 uses
input_precision="ieee" (TF32 is forbidden by the task).
Tunables: BLOCK_M (16 decode, 64-128 prefill), BLOCK_N (64-256), BLOCK_K (32-128), GROUP_M,
num_warps, num_stages.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gemm",
    "category": "matmul",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["tiled_gemm", "nt_layout", "k_major_b_operand", "fp32_accumulator", "grouped_tile_order",
                   "k_tail_mask", "edge_masks", "int64_offsets", "ieee_fp32_dot"],
    "tunables": {"BLOCK_M": [16, 64, 128], "BLOCK_N": [64, 128, 256], "BLOCK_K": [32, 64, 128], "GROUP_M": [4, 8],
                 "num_warps": [4, 8], "num_stages": [2, 3, 4]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"linear_bf16": 0.6502, "linear_fp16": 0.6326, "linear_fp32": 0.367, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _linear_kernel(x_ptr, w_ptr, y_ptr, M, N, K, stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                   IEEE_FP32: tl.constexpr):
    # one program per BLOCK_M x BLOCK_N tile of y = x @ w.T, grouped order as in matmul
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = tl.minimum(tiles_m - first_m, GROUP_M)
    # GROUP_M tile-rows swept together so programs in flight share w's rows in L2
    pid_m = first_m + (pid % per_group) % rows_in_group
    pid_n = (pid % per_group) // rows_in_group

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # w is [N, K] row-major (nn.Linear's layout); it is read as a [BLOCK_K, BLOCK_N] tile of w.T by
    # swapping the index roles, no transpose copy
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_n[None, :].to(tl.int64) * stride_wn + offs_k[:, None] * stride_wk  # [BLOCK_K, BLOCK_N]
    # edge masks for the last tile-row / tile-column
    m_mask = offs_m[:, None] < M
    n_mask = offs_n[None, :] < N

    # fp32 accumulator for every input dtype
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        # K tail: zero-filled on both operands
        k_ok = (k0 + offs_k) < K
        x = tl.load(x_ptrs, mask=m_mask & k_ok[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=k_ok[:, None] & n_mask, other=0.0)
        # fp32 inputs: IEEE products, not TF32
        if IEEE_FP32:
            acc = tl.dot(x, w, acc, input_precision="ieee")
        else:
            acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=m_mask & n_mask)


def linear(x: torch.Tensor, w: torch.Tensor, BLOCK_M: int = 128, BLOCK_N: int = 128, BLOCK_K: int = 64,
               GROUP_M: int = 8, num_warps: int = 8, num_stages: int = 3) -> torch.Tensor:
    assert x.dim() == 2 and w.dim() == 2 and x.shape[1] == w.shape[1] and x.dtype == w.dtype
    M, K = x.shape
    N = w.shape[0]
    # a decode batch is a few rows: the cost is streaming w once, so use narrow row tiles and more
    # pipelining stages
    if M <= 64:  # decode: small row tiles, the weight stream is what matters
        BLOCK_M, BLOCK_N, num_warps, num_stages = 16, 64, 4, 4
    # fp32 tiles take twice the shared memory per stage: halve the K step
    if x.dtype == torch.float32:
        BLOCK_K = min(BLOCK_K, 32)
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _linear_kernel[grid](x, w, y, M, N, K, x.stride(0), x.stride(1), w.stride(0), w.stride(1), y.stride(0),
                         y.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                         IEEE_FP32=x.dtype == torch.float32, num_warps=num_warps, num_stages=num_stages)
    return y
