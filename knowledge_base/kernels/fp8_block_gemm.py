"""Block-scaled FP8 GEMM (DeepSeek-V3): per-128-K-block fp8 tl.dot partials rescaled inside the K loop.

Op: y[i, n] = sum_g a_s[i, g] * b_s[n // 128, g] * (a[i, g-block] . b[n, g-block]) -> bf16;
a [M, K], b [N, K] float8_e4m3fn, a_s [M, K/128], b_s [ceil(N/128), K/128] fp32.
Traffic: 1 byte per operand element plus one fp32 scale per 128 activations and per 128 x 128
weights; y in bf16. Prefill shapes are compute-bound on fp8 tensor cores, decode shapes bound by
reading b once.
Tiling: BLOCK_K = 128 = the scale block, so each K step is one fp8 tl.dot into a fresh fp32 partial
[BLOCK_M, BLOCK_N], multiplied by the step's activation scales (a BLOCK_M vector) and weight
scales (a BLOCK_N vector, b_s[n // 128, g]; one distinct value when BLOCK_N divides 128) and
added to the fp32 accumulator. Both operands are K-contiguous (the layout Hopper fp8 MMAs need).
Decode (M <= 64): small row tiles, BLOCK_N = 64 and a deterministic split-K over scale blocks
(fp32 partials summed in a fixed order by a second kernel). Prefill: 128 x 128 tiles, grouped
order. Rows and columns past M and N are masked (N = 576 leaves a half weight block).
Tunables: BLOCK_M (16-128), BLOCK_N (64-128, a divisor of 128), SPLIT_K (auto), GROUP_M,
num_warps, num_stages.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "quantized_gemm",
    "category": "quantization",
    "dtypes": ["fp8_e4m3"],
    "techniques": ["fp8_tensor_core_dot", "block_scaled_fp8", "in_loop_rescale", "k_block_equals_scale_block",
                   "k_major_operands", "fp32_accumulator", "split_k", "deterministic_reduction",
                   "grouped_tile_order", "edge_masks"],
    "tunables": {"BLOCK_M": [16, 64, 128], "BLOCK_N": [64, 128], "SPLIT_K": [0, 1, 2, 4, 8], "GROUP_M": [8],
                 "num_warps": [4, 8], "num_stages": [3, 4]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"fp8_block_gemm_fp8_e4m3": 0.3937, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _fp8_block_gemm_kernel(a_ptr, as_ptr, b_ptr, bs_ptr, out_ptr, M, N, K, K_PER_SPLIT, stride_am, stride_asm,
                           stride_bn, stride_bsn, stride_os, stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                           BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
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
    m_ok = offs_m < M
    n_ok = offs_n < N
    k_start = split * K_PER_SPLIT
    k_end = tl.minimum(k_start + K_PER_SPLIT, K)
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + (k_start + offs_k)[None, :]
    b_ptrs = b_ptr + offs_n[None, :].to(tl.int64) * stride_bn + (k_start + offs_k)[:, None]
    # block scales (DeepSeek-V3 style): activations have one scale per (row, 128-wide K group),
    # weights one per (128 x 128 block); BLOCK_K = 128 is one K group, and a BLOCK_N tile lies
    # inside one weight block, so per step the scales are a column vector and a row vector
    as_ptrs = as_ptr + offs_m.to(tl.int64) * stride_asm
    bs_ptrs = bs_ptr + (offs_n // BLOCK_K).to(tl.int64) * stride_bsn

    # scales differ per K group, so they cannot factor out: each step's fp8 dot is scaled in fp32
    # before it is added
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(k_start, k_end, BLOCK_K):  # K is a multiple of BLOCK_K = 128: no K mask
        a = tl.load(a_ptrs, mask=m_ok[:, None], other=0.0)
        b = tl.load(b_ptrs, mask=n_ok[None, :], other=0.0)
        # index of this K group in the scale tensors
        g = k0 // BLOCK_K
        sa = tl.load(as_ptrs + g, mask=m_ok, other=0.0)
        sb = tl.load(bs_ptrs + g, mask=n_ok, other=0.0)
        partial = tl.dot(a, b)
        acc += partial * sa[:, None] * sb[None, :]
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K

    o_ptrs = out_ptr + split.to(tl.int64) * stride_os + offs_m[:, None].to(tl.int64) * stride_om + offs_n[None, :]
    tl.store(o_ptrs, acc.to(out_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


@triton.jit
def _sum_splits_kernel(ws_ptr, y_ptr, MN, SPLIT_K: tl.constexpr, BLOCK: tl.constexpr):
    # split-K second pass: sum the fp32 partials in a fixed order (deterministic, no atomics), then
    # round to the output dtype
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < MN
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for s in tl.static_range(SPLIT_K):  # fixed order: the same rounding every run
        acc += tl.load(ws_ptr + s * MN + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, acc.to(y_ptr.dtype.element_ty), mask=mask)


def fp8_block_gemm(a: torch.Tensor, a_s: torch.Tensor, b: torch.Tensor, b_s: torch.Tensor, BLOCK_M: int = 0,
                   BLOCK_N: int = 0, SPLIT_K: int = 0, GROUP_M: int = 8, num_warps: int = 0, num_stages: int = 4,
                   target_programs: int = 264) -> torch.Tensor:
    BLOCK_K = 128
    assert a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[1] and a.shape[1] % BLOCK_K == 0
    a, a_s, b, b_s = a.contiguous(), a_s.contiguous(), b.contiguous(), b_s.contiguous()
    M, K = a.shape
    N = b.shape[0]
    # decode shapes: narrow tiles over M and split-K; prefill: 128 x 128
    decode = M <= 64
    BLOCK_M = BLOCK_M or (max(16, triton.next_power_of_2(M)) if decode else 128)
    BLOCK_N = BLOCK_N or (64 if decode else 128)
    assert BLOCK_K % BLOCK_N == 0, "a column tile must not straddle two weight-scale blocks"
    num_warps = num_warps or (4 if decode else 8)
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    k_blocks = K // BLOCK_K
    # auto split-K only for decode (M <= 64): about one wave of programs, at least 4 K blocks per
    # split
    if SPLIT_K <= 0:
        SPLIT_K = max(1, min(triton.cdiv(target_programs, tiles), k_blocks // 4, 16)) if decode else 1
    k_per_split = triton.cdiv(k_blocks, SPLIT_K) * BLOCK_K
    SPLIT_K = triton.cdiv(K, k_per_split)
    y = torch.empty((M, N), dtype=torch.bfloat16, device=a.device)
    out = y if SPLIT_K == 1 else torch.empty((SPLIT_K, M, N), dtype=torch.float32, device=a.device)
    stride_os = 0 if SPLIT_K == 1 else out.stride(0)
    _fp8_block_gemm_kernel[(tiles, SPLIT_K)](a, a_s, b, b_s, out, M, N, K, k_per_split, a.stride(0), a_s.stride(0),
                                             b.stride(0), b_s.stride(0), stride_os, N, BLOCK_M=BLOCK_M,
                                             BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                                             num_warps=num_warps, num_stages=num_stages)
    if SPLIT_K > 1:
        BLOCK = 1024
        _sum_splits_kernel[(triton.cdiv(M * N, BLOCK),)](out, y, M * N, SPLIT_K=SPLIT_K, BLOCK=BLOCK)
    return y
