"""Linear layer + bias + GELU(tanh) with the epilogue fused into the GEMM.

Op: y[M, N] = gelu_tanh(x[M, K] @ w[N, K]^T + b[N]); fp32 accumulation, the bias and the GELU
applied to the fp32 accumulator while it is still in registers, one rounding at the store.
Traffic and bound: minimal traffic is (M*K + N*K + N + M*N) * elem, FLOPs 2*M*N*K. Prefill shapes
are compute-bound on tensor cores; decode shapes (M = 13..32) are bandwidth-bound on reading w.
Unfused (cuBLAS GEMM, then bias+GELU) writes the [M, N] product and reads it back: for decode
that round trip is small next to w, for prefill it is ~10% of the GEMM's time.
Tiling: each program owns a BLOCK_M x BLOCK_N tile of y and walks K in BLOCK_K steps with tl.dot
into an fp32 accumulator. w is stored [N, K] (nn.Linear), so the B operand tile is read as
w[n, k] with k along the tile's first axis (a transposed view; no copy). Programs are ordered in
GROUP_M tile-rows so consecutive programs share w columns in L2. Edges and the K tail are masked;
row offsets are int64. fp32 uses input_precision="ieee" (TF32 would fail the tolerance).
GELU(tanh) is h / (1 + exp(-2z)), z = sqrt(2/pi) (h + 0.044715 h^3): 0.5 (1 + tanh z) = sigmoid(2z),
one exp and no tanh (not in Triton's core language).
On the Triton CPU interpreter bf16 tl.dot is wrong; fp32/fp16 are exact there.
Tunables: BLOCK_M (16-128; by default 16/32/64 for small M, 128 otherwise), BLOCK_N (64-128; 256
spilled badly with BLOCK_K 32 on H200), BLOCK_K (32-128), GROUP_M (4-16), num_warps (4-8),
num_stages (2-5); the defaults pick BLOCK_K/warps/stages by dtype and M from a sweep on an H200 (torch 2.11, triton 3.6, 2026-11-29).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gemm_epilogue",
    "category": "fusion",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["tiled_gemm", "fp32_accumulator", "epilogue_fusion", "bias", "activation",
                   "grouped_tile_order", "transposed_weight_operand", "k_tail_mask", "edge_masks",
                   "int64_offsets", "ieee_fp32_dot", "small_m_tiles_for_decode"],
    "tunables": {"BLOCK_M": [16, 32, 64, 128], "BLOCK_N": [64, 128, 256], "BLOCK_K": [32, 64, 128],
                 "GROUP_M": [4, 8, 16], "num_warps": [4, 8], "num_stages": [2, 3, 4, 5]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"linear_bias_gelu_tanh_bf16": 0.7361, "linear_bias_gelu_tanh_fp16": 0.6957, "linear_bias_gelu_tanh_fp32": 0.3299, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _linear_bias_gelu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, stride_xm, stride_xk, stride_wn, stride_wk,
                             stride_ym, stride_yn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                             BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, IEEE_FP32: tl.constexpr):
    # one program per BLOCK_M x BLOCK_N tile of y = gelu(x @ w.T + b), on a 1-D grid remapped to
    # grouped order below
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = tl.minimum(tiles_m - first_m, GROUP_M)
    # GROUP_M tile-rows swept together, column strip by column strip, so programs in flight share
    # w's rows in L2
    pid_m = first_m + (pid % per_group) % rows_in_group
    pid_n = (pid % per_group) // rows_in_group

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_k[None, :] * stride_xk
    # w is [N, K] row-major (nn.Linear's layout): read as a [BLOCK_K, BLOCK_N] tile of w.T by
    # swapping the index roles, no transpose copy; int64 row indices before the strides
    w_ptrs = w_ptr + offs_n[None, :].to(tl.int64) * stride_wn + offs_k[:, None] * stride_wk
    m_mask = offs_m[:, None] < M
    n_ok = offs_n < N

    # fp32 accumulator for every input dtype
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        # K tail: out-of-range depth reads 0 on both operands and adds nothing
        k_ok = (k0 + offs_k) < K
        a = tl.load(x_ptrs, mask=m_mask & k_ok[None, :], other=0.0)
        bt = tl.load(w_ptrs, mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        # fp32 inputs: IEEE products, not TF32 (TF32 would change the answer)
        if IEEE_FP32:
            acc = tl.dot(a, bt, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, bt, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    # epilogue on the fp32 accumulator: + bias, GELU(tanh), one rounding
    bias = tl.load(b_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)
    h = acc + bias[None, :]
    z = 0.7978845608028654 * (h + 0.044715 * h * h * h)
    # 0.5 * h * (1 + tanh(z)) as h * sigmoid(2z): one exp
    y = h / (1.0 + tl.exp(-2.0 * z))
    y_ptrs = y_ptr + offs_m[:, None].to(tl.int64) * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=m_mask & n_ok[None, :])


def linear_bias_gelu_tanh(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, BLOCK_M: int | None = None,
                          BLOCK_N: int = 128, BLOCK_K: int | None = None, GROUP_M: int = 8,
                          num_warps: int | None = None, num_stages: int | None = None) -> torch.Tensor:
    assert x.dim() == 2 and w.dim() == 2 and x.shape[1] == w.shape[1] and b.shape == (w.shape[0],)
    M, K = x.shape
    N = w.shape[0]
    small_m = M <= 64
    fp32 = x.dtype == torch.float32
    if BLOCK_M is None:
        # row tile no taller than a decode batch needs (16 is tl.dot's minimum)
        BLOCK_M = 16 if M <= 16 else 32 if M <= 32 else 64 if small_m else 128
    # Defaults from a sweep on an H200 (torch 2.11, triton 3.6, 2026-11-29) (BLOCK_N 128). fp32 prefill: BLOCK_K 32, 4 warps, 2 stages took
    # 17.6 ms on the Phi-2 shape; BLOCK_K 64 with 4 warps spilled (60 ms). fp32 decode: BLOCK_K 64,
    # 4 warps, 3 stages (0.98 ms vs 1.72 with 8 warps). 16-bit: decode 4 warps x 4 stages, prefill
    # 8 warps x 3 stages, BLOCK_K 64.
    if BLOCK_K is None:
        BLOCK_K = 32 if (fp32 and not small_m) else 64
    if num_warps is None:
        num_warps = 4 if (small_m or fp32) else 8
    if num_stages is None:
        num_stages = (3 if small_m else 2) if fp32 else (4 if small_m else 3)
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _linear_bias_gelu_kernel[grid](x, w, b.contiguous(), y, M, N, K, x.stride(0), x.stride(1), w.stride(0),
                                   w.stride(1), y.stride(0), y.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                                   BLOCK_K=BLOCK_K, GROUP_M=GROUP_M, IEEE_FP32=x.dtype == torch.float32,
                                   num_warps=num_warps, num_stages=num_stages)
    return y
