"""FP8 e4m3 GEMM with per-tensor scales: fp8 tensor-core tl.dot, fp32 accumulator, scales in the epilogue.

Op: y = (a @ b^T in fp32) * scale_a * scale_b -> bf16; a [M, K], b [N, K] float8_e4m3fn.
Traffic: 1 byte per operand element, 2 per output. Prefill shapes are compute-bound on fp8 tensor
cores (about 2x the bf16 rate on an H200); decode shapes are bound by reading b once.
Tiling: program (tile, split) owns a BLOCK_M x BLOCK_N tile (grouped order) and a K range, walking
it in BLOCK_K = 128 steps (fp8 MMAs take K in multiples of 32). Both operands are K-contiguous:
a as [BLOCK_M, BLOCK_K] and b as [BLOCK_K, BLOCK_N] read from its [N, K] rows, the K-major layout
the Hopper fp8 tensor-core path requires. The per-tensor scales factor out of the K sum, so the
loop is a pure fp8 tl.dot and the scales are two multiplies per output in the epilogue, in the
reference's order. Decode (M <= 64): BLOCK_M = 16-64, BLOCK_N = 64 and a deterministic split-K
(fp32 partials, fixed-order sum, scales applied after the sum) for shapes with few column tiles.
Tunables: BLOCK_M (16-128), BLOCK_N (64-256), BLOCK_K (64-128), SPLIT_K (auto), GROUP_M,
num_warps, num_stages.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "quantized_gemm",
    "category": "quantization",
    "dtypes": ["fp8_e4m3"],
    "techniques": ["fp8_tensor_core_dot", "per_tensor_scales", "scale_epilogue", "k_major_operands",
                   "fp32_accumulator", "split_k", "deterministic_reduction", "grouped_tile_order", "edge_masks"],
    "tunables": {"BLOCK_M": [16, 64, 128], "BLOCK_N": [64, 128, 256], "BLOCK_K": [64, 128], "SPLIT_K": [0, 1, 2, 4, 8],
                 "GROUP_M": [8], "num_warps": [4, 8], "num_stages": [3, 4]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"fp8_gemm_fp8_e4m3": 0.5764, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _fp8_gemm_kernel(a_ptr, b_ptr, sa_ptr, sb_ptr, out_ptr, M, N, K, K_PER_SPLIT, stride_am, stride_bn, stride_os,
                     stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_M: tl.constexpr, APPLY_SCALES: tl.constexpr):
    # axis 0: a C tile in grouped order (GROUP_M tile-rows swept together for L2 reuse); axis 1:
    # the K slice (split-K, used for decode shapes where M is a few rows and the tiles alone cannot
    # fill the SMs)
    pid = tl.program_id(0)
    split = tl.program_id(1)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows_in_group
    pid_n = (pid % per_group) // rows_in_group

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_mask = offs_m[:, None] < M
    n_mask = offs_n[None, :] < N
    # this program's K slice; the last may be short
    k_start = split * K_PER_SPLIT
    k_end = tl.minimum(k_start + K_PER_SPLIT, K)
    # b is [N, K] row-major (weights): read as [BLOCK_K, BLOCK_N] tiles of b.T by index roles
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + (k_start + offs_k)[None, :]
    b_ptrs = b_ptr + offs_n[None, :].to(tl.int64) * stride_bn + (k_start + offs_k)[:, None]

    # fp8 x fp8 products accumulate in fp32 on the tensor cores
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(k_start, k_end, BLOCK_K):
        # K tail of this slice: zero-filled on both operands
        k_ok = (k0 + offs_k) < k_end
        a = tl.load(a_ptrs, mask=m_mask & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & n_mask, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K

    # per-tensor scales are one scalar each, so they factor out of the sum: apply them once to the
    # accumulator (with split-K, in the summing pass instead)
    if APPLY_SCALES:
        acc = acc * tl.load(sa_ptr) * tl.load(sb_ptr)
    o_ptrs = out_ptr + split.to(tl.int64) * stride_os + offs_m[:, None].to(tl.int64) * stride_om + offs_n[None, :]
    tl.store(o_ptrs, acc.to(out_ptr.dtype.element_ty), mask=m_mask & n_mask)


@triton.jit
def _sum_splits_kernel(ws_ptr, sa_ptr, sb_ptr, y_ptr, MN, SPLIT_K: tl.constexpr, BLOCK: tl.constexpr):
    # split-K second pass: sum the fp32 partials in a fixed order (deterministic, no atomics), then
    # round to the output dtype
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < MN
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in tl.static_range(SPLIT_K):  # fixed order: the same rounding every run
        acc += tl.load(ws_ptr + s * MN + offs, mask=mask, other=0.0)
    y = acc * tl.load(sa_ptr) * tl.load(sb_ptr)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def fp8_gemm(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor, BLOCK_M: int = 0,
             BLOCK_N: int = 0, BLOCK_K: int = 128, SPLIT_K: int = 0, GROUP_M: int = 8, num_warps: int = 0,
             num_stages: int = 4, target_programs: int = 264) -> torch.Tensor:
    assert a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[1]
    a, b = a.contiguous(), b.contiguous()
    M, K = a.shape
    N = b.shape[0]
    # decode shapes: narrow tiles over M, fewer warps, split-K; prefill: 128 x 128 tiles
    decode = M <= 64
    BLOCK_M = BLOCK_M or (max(16, triton.next_power_of_2(M)) if decode else 128)
    BLOCK_N = BLOCK_N or (64 if decode else 128)
    num_warps = num_warps or (4 if decode else 8)
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    k_blocks = triton.cdiv(K, BLOCK_K)
    # auto split-K only for decode (M <= 64): about one wave of programs, at least 4 K blocks per
    # split
    if SPLIT_K <= 0:
        SPLIT_K = max(1, min(triton.cdiv(target_programs, tiles), k_blocks // 4, 16)) if decode else 1
    k_per_split = triton.cdiv(k_blocks, SPLIT_K) * BLOCK_K
    SPLIT_K = triton.cdiv(K, k_per_split)
    y = torch.empty((M, N), dtype=torch.bfloat16, device=a.device)
    # one split writes bf16 y directly; several write fp32 partials
    out = y if SPLIT_K == 1 else torch.empty((SPLIT_K, M, N), dtype=torch.float32, device=a.device)
    stride_os = 0 if SPLIT_K == 1 else out.stride(0)
    _fp8_gemm_kernel[(tiles, SPLIT_K)](a, b, scale_a, scale_b, out, M, N, K, k_per_split, a.stride(0), b.stride(0),
                                       stride_os, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                                       GROUP_M=GROUP_M, APPLY_SCALES=SPLIT_K == 1, num_warps=num_warps,
                                       num_stages=num_stages)
    if SPLIT_K > 1:
        BLOCK = 1024
        _sum_splits_kernel[(triton.cdiv(M * N, BLOCK),)](out, scale_a, scale_b, y, M * N, SPLIT_K=SPLIT_K,
                                                         BLOCK=BLOCK)
    return y
