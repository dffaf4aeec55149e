# expect: numerical_mismatch
# bug: x / s_x is converted to int8 by truncation toward zero instead of rounding to nearest, biasing every activation toward zero
"""Known-bad W8A8 GEMM: per-token quantization with a truncating cast."""

import torch
import triton
import triton.language as tl


@triton.jit
def _quant_rows_kernel(x_ptr, q_ptr, s_ptr, K, stride_x, stride_q, BLOCK_K: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_K)
    mask = cols < K
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    scale = tl.maximum(tl.max(tl.abs(x), axis=0), 1e-10) / 127.0
    v = tl.minimum(tl.maximum(x / scale, -128.0), 127.0)
    tl.store(q_ptr + row * stride_q + cols, v.to(tl.int8), mask=mask)
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
    stride_bn,
    stride_cm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + offs_k) < K
        a = tl.load(
            a_ptr + offs_m[:, None].to(tl.int64) * stride_am + (k0 + offs_k)[None, :],
            mask=(offs_m[:, None] < M) & k_ok[None, :],
            other=0,
        )
        b = tl.load(
            b_ptr + offs_n[None, :].to(tl.int64) * stride_bn + (k0 + offs_k)[:, None],
            mask=k_ok[:, None] & (offs_n[None, :] < N),
            other=0,
        )
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
    sa = tl.load(sa_ptr + offs_m, mask=offs_m < M, other=0.0)
    sb = tl.load(sb_ptr + offs_n, mask=offs_n < N, other=0.0)
    y = acc.to(tl.float32) * sa[:, None] * sb[None, :]
    tl.store(
        c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :],
        y.to(c_ptr.dtype.element_ty),
        mask=(offs_m[:, None] < M) & (offs_n[None, :] < N),
    )


def w8a8_gemm(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_scale: torch.Tensor,
    BLOCK_M: int = 64,
    BLOCK_N: int = 64,
    BLOCK_K: int = 64,
    num_warps: int = 4,
) -> torch.Tensor:
    x = x.contiguous()
    w_q = w_q.contiguous()
    M, K = x.shape
    N = w_q.shape[0]
    x_q = torch.empty((M, K), dtype=torch.int8, device=x.device)
    s_x = torch.empty((M,), dtype=torch.float32, device=x.device)
    _quant_rows_kernel[(M,)](
        x, x_q, s_x, K, x.stride(0), x_q.stride(0), BLOCK_K=triton.next_power_of_2(K)
    )
    y = torch.empty((M, N), dtype=torch.bfloat16, device=x.device)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
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
        w_q.stride(0),
        y.stride(0),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        num_warps=num_warps,
    )
    return y
