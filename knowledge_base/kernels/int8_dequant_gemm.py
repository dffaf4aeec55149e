"""W8A16 GEMM: int8 weight tiles dequantized in registers (per-channel scale), fp16/bf16 tensor cores.

Op: W = (float(w_q) * w_scale[n]) rounded to x's dtype; y = x @ W^T with fp32 accumulation;
x [M, K] fp16/bf16, w_q [N, K] int8, w_scale [N] fp32, y [M, N] in x's dtype.
Traffic: w_q is 1 byte per weight (half of bf16) and dominates at decode; x and y are small.
The roofline at decode is N * K bytes at HBM bandwidth.
Tiling: program (tile, split) owns a BLOCK_M x BLOCK_N tile of y and a K range. Each K step loads
x [BLOCK_M, BLOCK_K] and the int8 weight tile [BLOCK_K, BLOCK_N] (k contiguous: coalesced,
K-major B operand), converts it to fp32, multiplies by the BLOCK_N channel scales (loaded once
per program), rounds to x's dtype and feeds tl.dot -- the dequantized weight never touches
memory. Decode (M <= 64): BLOCK_M = 16, BLOCK_N = 64 and split-K for shapes with few column
tiles, the fp32 partials summed in a fixed order by a second kernel (deterministic). Prefill:
128 x 128 tiles in grouped order, no split.
Tunables: BLOCK_M, BLOCK_N, BLOCK_K (64-128), SPLIT_K (auto), GROUP_M, num_warps, num_stages.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "quantized_gemm",
    "category": "quantization",
    "dtypes": ["fp16", "bf16"],
    "techniques": ["weight_only_quant", "in_register_dequantization", "per_channel_weight_scale", "nt_layout",
                   "split_k", "deterministic_reduction", "grouped_tile_order", "fp32_accumulator", "edge_masks"],
    "tunables": {"BLOCK_M": [16, 64, 128], "BLOCK_N": [64, 128], "BLOCK_K": [64, 128], "SPLIT_K": [0, 1, 2, 4, 8],
                 "GROUP_M": [8], "num_warps": [4, 8], "num_stages": [3, 4]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"int8_dequant_gemm_bf16": 0.4898, "int8_dequant_gemm_fp16": 0.4885, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _w8a16_kernel(x_ptr, wq_ptr, ws_ptr, out_ptr, M, N, K, K_PER_SPLIT, stride_xm, stride_wn, stride_os,
                  stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
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
    offs_k = tl.arange(0, BLOCK_K)
    m_mask = offs_m[:, None] < M
    n_ok = offs_n < N
    k_start = split * K_PER_SPLIT
    k_end = tl.minimum(k_start + K_PER_SPLIT, K)
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + (k_start + offs_k)[None, :]
    w_ptrs = wq_ptr + offs_n[None, :].to(tl.int64) * stride_wn + (k_start + offs_k)[:, None]
    # per-output-channel weight scales: one per column of this tile, loaded once
    scale = tl.load(ws_ptr + offs_n, mask=n_ok, other=0.0)

    # fp32 accumulator
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(k_start, k_end, BLOCK_K):
        # K tail of this slice: zero-filled on both operands (int8 0 dequantises to 0)
        k_ok = (k0 + offs_k) < k_end
        x = tl.load(x_ptrs, mask=m_mask & k_ok[None, :], other=0.0)
        wq = tl.load(w_ptrs, mask=k_ok[:, None] & n_ok[None, :], other=0)
        # dequantise in registers: int8 -> fp32 * scale -> activation dtype, then a 16-bit tensor-
        # core dot. The weights cross memory as int8, half the bytes of fp16: decode GEMMs are
        # bound on that stream
        w = (wq.to(tl.float32) * scale[None, :]).to(x.dtype)
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K

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


def int8_dequant_gemm(x: torch.Tensor, w_q: torch.Tensor, w_scale: torch.Tensor, BLOCK_M: int = 0, BLOCK_N: int = 0,
                      BLOCK_K: int = 0, SPLIT_K: int = 0, GROUP_M: int = 8, num_warps: int = 0, num_stages: int = 3,
                      target_programs: int = 264) -> torch.Tensor:
    assert x.dim() == 2 and w_q.dim() == 2 and x.shape[1] == w_q.shape[1] and w_q.dtype == torch.int8
    x, w_q, w_scale = x.contiguous(), w_q.contiguous(), w_scale.contiguous()
    M, K = x.shape
    N = w_q.shape[0]
    # decode shapes: narrow tiles over M, a longer K step, split-K
    decode = M <= 64
    BLOCK_M = BLOCK_M or (max(16, triton.next_power_of_2(M)) if decode else 128)
    BLOCK_N = BLOCK_N or (64 if decode else 128)
    BLOCK_K = BLOCK_K or (128 if decode else 64)
    num_warps = num_warps or (4 if decode else 8)
    tiles = triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N)
    k_blocks = triton.cdiv(K, BLOCK_K)
    # auto split-K only for decode (M <= 64): about one wave of programs, at least 4 K blocks per
    # split
    if SPLIT_K <= 0:
        SPLIT_K = max(1, min(triton.cdiv(target_programs, tiles), k_blocks // 4, 16)) if decode else 1
    k_per_split = triton.cdiv(k_blocks, SPLIT_K) * BLOCK_K
    SPLIT_K = triton.cdiv(K, k_per_split)
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    out = y if SPLIT_K == 1 else torch.empty((SPLIT_K, M, N), dtype=torch.float32, device=x.device)
    stride_os = 0 if SPLIT_K == 1 else out.stride(0)
    _w8a16_kernel[(tiles, SPLIT_K)](x, w_q, w_scale, out, M, N, K, k_per_split, x.stride(0), w_q.stride(0), stride_os,
                                    N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=GROUP_M,
                                    num_warps=num_warps, num_stages=num_stages)
    if SPLIT_K > 1:
        BLOCK = 1024
        _sum_splits_kernel[(triton.cdiv(M * N, BLOCK),)](out, y, M * N, SPLIT_K=SPLIT_K, BLOCK=BLOCK)
    return y
