"""W8A8 int8 GEMM: int8 activations (per-token scales) x int8 weights (per-channel scales).

Op: C[M, N] = (sum_k Aq[m, k] * Bq[k, n]) * a_scale[m] * b_scale[n] (+ bias[n]), where
Aq = round(A / a_scale[:, None]) and Bq = round(B / b_scale[None, :]) are symmetric int8 (zero
point 0, range [-127, 127]); output fp16 or bf16.
Contract: the int8 products are exact and summed in int32 (`tl.dot` on int8 tiles accumulates in
int32 on tensor cores); K up to 2**31 / 127**2 ~ 133k cannot overflow. Scales are applied once,
in fp32, in the epilogue: acc_fp32 * a_scale[m] * b_scale[n]. Applying a per-k-group scale inside
the K loop would be the block-scaled (group-wise) variant; per-token x per-channel factor out of
the sum, which is why they cost nothing here.
Traffic: (M*K + K*N) * 1 byte + (M + N) * 4 (scales) + M*N * 2 bytes out: half the bytes of a
bf16 GEMM, and int8 tensor cores run at twice the bf16 rate (Ampere, Hopper, Ada), so both the
memory-bound (decode) and the compute-bound (prefill) regime gain up to 2x.
Tiling: the tiled GEMM (grouped ordering, masked tails with `other=0`, int64 offsets) with an
int32 accumulator; BLOCK_K is 64-128 since int8 tiles are half the bytes of fp16 ones.
Tunables: BLOCK_M (16-128; 16-32 for decode), BLOCK_N (64-256), BLOCK_K (64-128), GROUP_M (8),
num_warps (4-8), num_stages (3-5).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gemm",
    "category": "quantization",
    "dtypes": ["int8"],
    "techniques": [
        "w8a8",
        "int8_tensor_cores",
        "int32_accumulation",
        "per_token_scale",
        "per_channel_scale",
        "scale_in_epilogue",
        "tiling",
        "grouped_ordering",
    ],
    "tunables": {
        "BLOCK_M": [16, 32, 64, 128],
        "BLOCK_N": [64, 128, 256],
        "BLOCK_K": [64, 128],
        "GROUP_M": [8],
        "num_warps": [4, 8],
        "num_stages": [3, 4, 5],
    },
    "verified_on": ["NVIDIA H200"],
    "attainment": {"4096x4096x4096 int8 -> bf16": 0.6253, "source": "docs/results/templates_h200.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
    "template": True,
}


@triton.jit
def _w8a8_gemm_kernel(
    a_ptr,
    b_ptr,
    as_ptr,
    bs_ptr,
    bias_ptr,
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
    HAS_BIAS: tl.constexpr,
):
    # one program per BLOCK_M x BLOCK_N tile of C, on a 1-D grid remapped to grouped order below
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group_size = GROUP_M * num_pid_n
    first_m = (pid // group_size) * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    # grouped order: GROUP_M tile-rows swept together, column strip by column strip, so programs in
    # flight share B's columns (and their rows of A) in L2
    pid_m = first_m + (pid % group_size) % group_m
    pid_n = (pid % group_size) // group_m

    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    m_ok = rm < M
    n_ok = rn < N
    # int32 accumulator: int8 x int8 products add up exactly (no rounding) on the int8 tensor cores
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        # edge and K-tail masks read 0, which adds nothing
        a = tl.load(
            a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak,
            mask=m_ok[:, None] & (ks[None, :] < K),
            other=0,
        )
        b = tl.load(
            b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn,
            mask=(ks[:, None] < K) & n_ok[None, :],
            other=0,
        )
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)

    a_s = tl.load(as_ptr + rm, mask=m_ok, other=0.0)
    b_s = tl.load(bs_ptr + rn, mask=n_ok, other=0.0)
    # dequantise once after the K loop: a per-row (token) scale times a per-column (channel) scale
    # factors out of the whole sum
    out = acc.to(tl.float32) * a_s[:, None] * b_s[None, :]
    if HAS_BIAS:
        out += tl.load(bias_ptr + rn, mask=n_ok, other=0.0).to(tl.float32)[None, :]
    tl.store(
        c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn,
        out.to(c_ptr.dtype.element_ty),
        mask=m_ok[:, None] & n_ok[None, :],
    )


def quantize_per_row(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric int8 per row: (q int8 [R, C], scale fp32 [R]) with x ~= q * scale[:, None]."""
    amax = x.float().abs().amax(dim=1).clamp(min=1e-12)
    scale = amax / 127.0
    # symmetric range -127 .. 127 (no -128), so q * scale is symmetric around 0
    q = torch.round(x.float() / scale[:, None]).clamp(-127, 127).to(torch.int8)
    return q, scale


def w8a8_gemm(
    a_q: torch.Tensor,
    b_q: torch.Tensor,
    a_scale: torch.Tensor,
    b_scale: torch.Tensor,
    bias: torch.Tensor | None = None,
    out_dtype: torch.dtype = torch.float16,
    BLOCK_M: int = 64,
    BLOCK_N: int = 128,
    BLOCK_K: int = 128,
    GROUP_M: int = 8,
    num_warps: int = 4,
    num_stages: int = 4,
) -> torch.Tensor:
    """a_q int8 [M, K], b_q int8 [K, N], a_scale fp32 [M], b_scale fp32 [N] -> C [M, N]."""
    assert a_q.dtype == torch.int8 and b_q.dtype == torch.int8, "operands must be int8"
    assert a_q.shape[1] == b_q.shape[0], "expected A[M, K] @ B[K, N]"
    M, K = a_q.shape
    N = b_q.shape[1]
    assert a_scale.shape == (M,) and b_scale.shape == (N,), (
        "scales: a_scale[M] (per token), b_scale[N] (per channel)"
    )
    c = torch.empty((M, N), device=a_q.device, dtype=out_dtype)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _w8a8_gemm_kernel[grid](
        a_q,
        b_q,
        a_scale.float().contiguous(),
        b_scale.float().contiguous(),
        bias if bias is not None else c,
        c,
        M,
        N,
        K,
        a_q.stride(0),
        a_q.stride(1),
        b_q.stride(0),
        b_q.stride(1),
        c.stride(0),
        c.stride(1),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        GROUP_M=GROUP_M,
        HAS_BIAS=bias is not None,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return c
