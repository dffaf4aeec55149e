"""W8A8 GEMM: per-token dynamic int8 quantization of x, then an int8 x int8 -> int32 GEMM with
a two-scale epilogue to bf16.

Op: s_x[i] = max(amax_k |x[i,k]|, 1e-10) / 127; q = clamp(rint(x / s_x), -128, 127) int8;
y = float(q @ w_q^T) * s_x[i] * w_scale[n], rounded to bf16.
Traffic: minimal is x (2 * M * K) + w_q (N * K) + w_scale (4 * N) + y (2 * M * N). This two-kernel
version adds the int8 copy of x (written and read back: 2 * M * K bytes) and M scales; a fused
variant quantizes A tiles inside the GEMM prologue once the row scales are known.
Kernel 1 (one program per row): pass 1 finds the row's abs-max in fp32, pass 2 divides with
IEEE rounding (tl.math.div_rn, so q matches a PyTorch reference bit for bit), rounds half to even
with the fp32 magic-number trick ((v + 1.5 * 2^23) - 1.5 * 2^23 is rint(v) for |v| < 2^22),
clamps and stores int8. Kernel 2: tiled GEMM on int8 tensor cores, int32 accumulator (exact: |acc|
<= 127 * 128 * K), grouped tile order, K tail and M/N edges masked with zeros; the epilogue
converts acc to fp32 and multiplies by s_x then w_scale, in the reference's order.
Tunables: quant BLOCK_K and num_warps; GEMM BLOCK_M, BLOCK_N (64-256), BLOCK_K (64-256: int8 wants
K tiles of at least 32), GROUP_M, num_warps, num_stages.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "quantized_gemm",
    "category": "quantization",
    "dtypes": ["int8"],
    "techniques": [
        "per_token_dynamic_quant",
        "per_channel_weight_scale",
        "int8_tensor_core_dot",
        "int32_accumulator",
        "scale_epilogue",
        "round_half_even_magic_number",
        "ieee_division",
        "grouped_tile_order",
        "k_tail_mask",
        "edge_masks",
    ],
    "tunables": {
        "QUANT_BLOCK_K": [1024, 2048, 4096],
        "BLOCK_M": [16, 64, 128],
        "BLOCK_N": [64, 128, 256],
        "BLOCK_K": [64, 128, 256],
        "GROUP_M": [4, 8],
        "num_warps": [4, 8],
        "num_stages": [2, 3, 4],
    },
    "verified_on": ["NVIDIA H200"],
    "attainment": {"source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)", "w8a8_gemm_int8": 0.6363},
}


@triton.jit
def _quant_rows_kernel(x_ptr, q_ptr, s_ptr, K, stride_x, stride_q, BLOCK_K: tl.constexpr):
    # activation quantisation, one program per row: pass 1 the row's absolute max, pass 2 quantise
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    q_row = q_ptr + row * stride_q
    offs = tl.arange(0, BLOCK_K)

    amax = tl.zeros([BLOCK_K], tl.float32)
    for start in range(0, K, BLOCK_K):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < K, other=0.0).to(tl.float32)
        amax = tl.maximum(amax, tl.abs(x))
    # symmetric per-token scale amax / 127 (floored at 1e-10 so an all-zero row does not divide by
    # 0); div_rn is the IEEE-rounded division torch uses, so codes match the reference exactly
    scale = tl.math.div_rn(tl.maximum(tl.max(amax, axis=0), 1e-10), 127.0)

    for start in range(0, K, BLOCK_K):
        cols = start + offs
        mask = cols < K
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        v = tl.math.div_rn(x, tl.zeros_like(x) + scale)
        # adding and subtracting 1.5 * 2**23 rounds an fp32 in +-2**22 to the nearest integer, ties
        # to even, as torch.round does
        v = (v + 12582912.0) - 12582912.0  # round half to even (1.5 * 2^23 trick)
        # clamp to int8's range before the cast
        v = tl.minimum(tl.maximum(v, -128.0), 127.0)
        tl.store(q_row + cols, v.to(tl.int8), mask=mask)
    tl.store(s_ptr + row, scale)


@triton.jit
def _int8_gemm_kernel(
    a_ptr,
    b_ptr,
    sa_ptr,
    sb_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bn,
    stride_bk,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # int8 GEMM: one program per C tile, grouped order (GROUP_M tile-rows swept together for L2
    # reuse)
    pid = tl.program_id(0)
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
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    # w_q is [N, K]: read it as a [BLOCK_K, BLOCK_N] tile of its transpose
    b_ptrs = b_ptr + offs_n[None, :].to(tl.int64) * stride_bn + offs_k[:, None] * stride_bk
    m_mask = offs_m < M
    n_mask = offs_n < N

    # int8 x int8 products accumulate exactly in int32 (int8 tensor cores); scales are applied once
    # at the end
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        # K tail: zero codes add nothing
        k_ok = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=m_mask[:, None] & k_ok[None, :], other=0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & n_mask[None, :], other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # dequantise: per-row activation scale times per-column weight scale, in fp32
    sa = tl.load(sa_ptr + offs_m, mask=m_mask, other=0.0)
    sb = tl.load(sb_ptr + offs_n, mask=n_mask, other=0.0)
    y = acc.to(tl.float32) * sa[:, None] * sb[None, :]
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, y.to(c_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


def w8a8_gemm(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_scale: torch.Tensor,
    QUANT_BLOCK_K: int = 4096,
    BLOCK_M: int = 128,
    BLOCK_N: int = 128,
    BLOCK_K: int = 128,
    GROUP_M: int = 8,
    num_warps: int = 8,
    num_stages: int = 3,
) -> torch.Tensor:
    assert x.dim() == 2 and w_q.dim() == 2 and x.shape[1] == w_q.shape[1]
    x = x.contiguous()
    w_q = w_q.contiguous()
    w_scale = w_scale.contiguous()
    M, K = x.shape
    N = w_q.shape[0]
    x_q = torch.empty((M, K), dtype=torch.int8, device=x.device)
    s_x = torch.empty((M,), dtype=torch.float32, device=x.device)
    qblock = min(QUANT_BLOCK_K, triton.next_power_of_2(K))
    _quant_rows_kernel[(M,)](
        x, x_q, s_x, K, x.stride(0), x_q.stride(0), BLOCK_K=qblock, num_warps=8
    )
    y = torch.empty((M, N), dtype=torch.bfloat16, device=x.device)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _int8_gemm_kernel[grid](
        x_q,
        w_q,
        s_x,
        w_scale,
        y,
        M,
        N,
        K,
        x_q.stride(0),
        x_q.stride(1),
        w_q.stride(0),
        w_q.stride(1),
        y.stride(0),
        y.stride(1),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        GROUP_M=GROUP_M,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return y
