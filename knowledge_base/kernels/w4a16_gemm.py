"""W4A16 GEMM: packed int4 weights (two per byte along K, group-128 scales) unpacked in registers.

Op: u = nibble (low = even k, high = odd k) of w_packed[N, K/2]; W = (u - 8) * scales[n, k // 128]
rounded to x's dtype; y = x @ W^T with fp32 accumulation; x [M, K] fp16/bf16.
Traffic: half a byte per weight plus one scale per 128 weights: 4x fewer weight bytes than bf16,
which is the whole roofline at decode (N * K / 2 bytes).
Tiling: BLOCK_K = 128 = one scale group per K step, so each step loads one [BLOCK_N] scale vector.
The [64, BLOCK_N] tile of packed bytes (k-pairs contiguous in memory) is split into its low and
high nibbles -- two [64, BLOCK_N] tiles for the even and the odd k of the step -- dequantized
((u - 8) in fp32, times the scale, rounded to x's dtype), and multiplied by the even and odd
columns of the x tile, loaded as two stride-2 [BLOCK_M, 64] tiles: two tl.dot per step and no
register shuffle to re-interleave k. Decode (M <= 64): BLOCK_M = 16, BLOCK_N = 64, split-K over
groups when there are few column tiles, fp32 partials summed in a fixed order by a second kernel.
Prefill: 128 x 128 tiles in grouped order.
Tunables: BLOCK_M, BLOCK_N (64-128), SPLIT_K (auto), GROUP_M, num_warps, num_stages.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "quantized_gemm",
    "category": "quantization",
    "dtypes": ["fp16", "bf16"],
    "techniques": ["weight_only_quant", "int4_unpacking", "nibble_split_two_dots", "group_scale_per_k_step",
                   "in_register_dequantization", "split_k", "deterministic_reduction", "grouped_tile_order",
                   "fp32_accumulator", "edge_masks"],
    "tunables": {"BLOCK_M": [16, 64, 128], "BLOCK_N": [64, 128], "SPLIT_K": [0, 1, 2, 4, 8], "GROUP_M": [8],
                 "num_warps": [4, 8], "num_stages": [3, 4]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)", "w4a16_gemm_bf16": 0.0495, "w4a16_gemm_fp16": 0.0645},
}


@triton.jit
def _w4a16_kernel(x_ptr, wp_ptr, s_ptr, out_ptr, M, N, K, K_PER_SPLIT, stride_xm, stride_wn, stride_sn, stride_os,
                  stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP: tl.constexpr,
                  GROUP_M: tl.constexpr):
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
    # each K step is one quantisation group of GROUP = 128 values, stored as 64 bytes, two 4-bit
    # values per byte
    offs_j = tl.arange(0, GROUP // 2)  # byte j of a step holds k = 2j (low) and 2j + 1 (high)
    m_mask = offs_m[:, None] < M
    n_ok = offs_n < N
    # splits are whole groups, so a group's scale is never split
    k_start = split * K_PER_SPLIT
    k_end = tl.minimum(k_start + K_PER_SPLIT, K)
    x_rows = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm
    w_cols = wp_ptr + offs_n[None, :].to(tl.int64) * stride_wn
    s_cols = s_ptr + offs_n.to(tl.int64) * stride_sn

    # fp32 accumulator
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(k_start, k_end, GROUP):
        # instead of interleaving the unpacked nibbles, x is loaded as its even and odd K columns
        # and the dot is split in two: x_even @ w_low + x_odd @ w_high
        x_even = tl.load(x_rows + (k0 + 2 * offs_j)[None, :], mask=m_mask, other=0.0)
        x_odd = tl.load(x_rows + (k0 + 2 * offs_j + 1)[None, :], mask=m_mask, other=0.0)
        packed = tl.load(w_cols + (k0 // 2 + offs_j)[:, None], mask=n_ok[None, :], other=0).to(tl.int32)
        # one scale per (output channel, group)
        scale = tl.load(s_cols + k0 // GROUP, mask=n_ok, other=0.0).to(tl.float32)
        # unpack: low nibble is k = 2j, high nibble k = 2j + 1; values are stored offset by 8
        # (0..15 means -8..7); dequantise in fp32, then cast to the activation dtype for the tensor
        # cores
        w_even = (((packed & 15) - 8).to(tl.float32) * scale[None, :]).to(x_even.dtype)
        w_odd = ((((packed >> 4) & 15) - 8).to(tl.float32) * scale[None, :]).to(x_even.dtype)
        acc = tl.dot(x_even, w_even, acc)
        acc = tl.dot(x_odd, w_odd, acc)

    o_ptrs = out_ptr + split.to(tl.int64) * stride_os + offs_m[:, None].to(tl.int64) * stride_om + offs_n[None, :]
    tl.store(o_ptrs, acc.to(out_ptr.dtype.element_ty), mask=m_mask & n_ok[None, :])


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


def w4a16_gemm(x: torch.Tensor, w_packed: torch.Tensor, scales: torch.Tensor, BLOCK_M: int = 0, BLOCK_N: int = 0,
               SPLIT_K: int = 0, GROUP_M: int = 8, num_warps: int = 0, num_stages: int = 3,
               target_programs: int = 264) -> torch.Tensor:
    GROUP = 128
    assert x.dim() == 2 and w_packed.dim() == 2 and x.shape[1] == 2 * w_packed.shape[1] and x.shape[1] % GROUP == 0
    x, w_packed, scales = x.contiguous(), w_packed.contiguous(), scales.contiguous()
    M, K = x.shape
    N = w_packed.shape[0]
    # decode shapes: narrow tiles over M, split-K over groups
    decode = M <= 64
    BLOCK_M = BLOCK_M or (max(16, triton.next_power_of_2(M)) if decode else 128)
    BLOCK_N = BLOCK_N or (64 if decode else 128)
    num_warps = num_warps or (4 if decode else 8)
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    groups = K // GROUP
    # auto split-K only for decode, at least 4 groups per split
    if SPLIT_K <= 0:
        SPLIT_K = max(1, min(triton.cdiv(target_programs, tiles), groups // 4, 16)) if decode else 1
    k_per_split = triton.cdiv(groups, SPLIT_K) * GROUP
    SPLIT_K = triton.cdiv(K, k_per_split)
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    out = y if SPLIT_K == 1 else torch.empty((SPLIT_K, M, N), dtype=torch.float32, device=x.device)
    stride_os = 0 if SPLIT_K == 1 else out.stride(0)
    _w4a16_kernel[(tiles, SPLIT_K)](x, w_packed, scales, out, M, N, K, k_per_split, x.stride(0), w_packed.stride(0),
                                    scales.stride(0), stride_os, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, GROUP=GROUP,
                                    GROUP_M=GROUP_M, num_warps=num_warps, num_stages=num_stages)
    if SPLIT_K > 1:
        BLOCK = 1024
        _sum_splits_kernel[(triton.cdiv(M * N, BLOCK),)](out, y, M * N, SPLIT_K=SPLIT_K, BLOCK=BLOCK)
    return y
