"""Batched GEMM c[z] = a[z] @ b[z] with an fp32 accumulator; the batch index is grid axis 1.

Op: c[BATCH, M, N] = a[BATCH, M, K] @ b[BATCH, K, N], one dtype (fp32 / fp16 / bf16), fp32
accumulation, output rounded once.
Traffic: minimal is BATCH * (M*K + K*N + M*N) * elem. Attention-score shapes (K = 128, M = N =
2048) are compute-bound; the MLA decode shapes (M = 13..32) are bound by reading b once.
Tiling: program (t, z) owns tile t (grouped order over the M x N tiles of one batch entry) of
batch entry z and walks K in BLOCK_K steps with tl.dot; edges and the K tail are masked. Batch
offsets are int64 (BATCH * M * N passes 2^31 on the prefill shapes). The batch goes on grid
axis 1, tiles on axis 0 (axis 1 is limited to 65535, tiles could exceed it, batches do not).
fp32 uses input_precision="ieee" (TF32 is forbidden by the task). The interpreter's bf16 tl.dot
is wrong: bf16 is checked on GPU only.
Tunables: BLOCK_M (16 for decode, 64-128 prefill), BLOCK_N (64-128), BLOCK_K (32-128), GROUP_M,
num_warps, num_stages. The wrapper shrinks BLOCK_M for M <= 32.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gemm",
    "category": "matmul",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["batched_gemm", "tiled_gemm", "fp32_accumulator", "grouped_tile_order", "k_tail_mask",
                   "edge_masks", "int64_offsets", "ieee_fp32_dot", "batch_on_grid_axis"],
    "tunables": {"BLOCK_M": [16, 64, 128], "BLOCK_N": [64, 128], "BLOCK_K": [32, 64, 128], "GROUP_M": [4, 8],
                 "num_warps": [4, 8], "num_stages": [2, 3, 4]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"bmm_bf16": 0.2904, "bmm_fp16": 0.4473, "bmm_fp32": 0.4791, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_az, stride_am, stride_ak, stride_bz, stride_bk, stride_bn,
                stride_cz, stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, IEEE_FP32: tl.constexpr):
    # axis 0: a C tile in grouped order (as in matmul); axis 1: the batch index z, int64 because z
    # * stride_az can pass 2**31
    pid = tl.program_id(0)
    z = tl.program_id(1).to(tl.int64)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = tl.minimum(tiles_m - first_m, GROUP_M)
    # GROUP_M tile-rows swept together, column strip by column strip, so neighbouring programs
    # reuse B's columns from L2
    pid_m = first_m + (pid % per_group) % rows_in_group
    pid_n = (pid % per_group) // rows_in_group

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # the batch offset is added once; within a batch the addressing is a plain 2-D GEMM's
    a_ptrs = a_ptr + z * stride_az + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + z * stride_bz + offs_k[:, None].to(tl.int64) * stride_bk + offs_n[None, :] * stride_bn
    # edge masks for the last tile-row / tile-column
    m_mask = offs_m[:, None] < M
    n_mask = offs_n[None, :] < N

    # fp32 accumulator for every input dtype
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        # K tail: zero-filled on both operands, so it adds nothing
        k_ok = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=m_mask & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & n_mask, other=0.0)
        # fp32 inputs: IEEE products, not TF32 (TF32 would change the answer)
        if IEEE_FP32:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + z * stride_cz + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=m_mask & n_mask)


def bmm(a: torch.Tensor, b: torch.Tensor, BLOCK_M: int = 128, BLOCK_N: int = 128, BLOCK_K: int = 64,
        GROUP_M: int = 8, num_warps: int = 8, num_stages: int = 3) -> torch.Tensor:
    assert a.dim() == 3 and b.dim() == 3 and a.shape[0] == b.shape[0] and a.shape[2] == b.shape[1]
    assert a.dtype == b.dtype
    Z, M, K = a.shape
    N = b.shape[2]
    if M <= 32:  # decode: do not waste a 128-row tile on 13-32 rows
        BLOCK_M, num_warps = 16, 4
    if a.dtype == torch.float32:  # IEEE fp32 tiles are 2x larger in registers / shared memory
        BLOCK_K = min(BLOCK_K, 32)
    c = torch.empty((Z, M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N), Z)
    _bmm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), a.stride(2), b.stride(0), b.stride(1),
                      b.stride(2), c.stride(0), c.stride(1), c.stride(2), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                      BLOCK_K=BLOCK_K, GROUP_M=GROUP_M, IEEE_FP32=a.dtype == torch.float32, num_warps=num_warps,
                      num_stages=num_stages)
    return c
