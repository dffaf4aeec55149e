"""GEMM with a fused epilogue: bias, activation and optional residual applied before the store.

Op: C[M, N] = act(A[M, K] @ B[K, N] + bias[N]) (+ R[M, N] when a residual is given), with
act in {none, relu, gelu_tanh, silu}; fp32 accumulation and epilogue math, output in A's dtype.
Traffic: unfused, `linear -> +bias -> act -> +residual` writes C and re-reads it up to three
times: 2-4 extra M*N*elem round trips, which for decode-sized GEMMs (M small) can exceed the
GEMM itself. Fused, the epilogue runs on the fp32 accumulator while it is still in registers:
traffic is (M*K + K*N + N + M*N [+ M*N residual]) * elem, and the activation is applied before
rounding to fp16/bf16 (one rounding instead of three -- also more accurate).
Tiling: the tiled GEMM (grouped ordering, BM x BN x BK, masked tails, int64 offsets); the
activation is a constexpr string, so each variant compiles to straight-line code with no branch.
gelu_tanh uses 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))); Triton's core language
has no tanh (libdevice's is CUDA-only), so it is written tanh(u) = 2 * sigmoid(2u) - 1.
Tunables: as the tiled GEMM (BLOCK_M/N/K, GROUP_M, num_warps, num_stages); the epilogue adds
registers (bias row, residual tile), so the largest 128x256 tiles may need num_warps=8.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gemm",
    "category": "fusion",
    "dtypes": ["fp16", "bf16", "fp32"],
    "techniques": [
        "epilogue_fusion",
        "bias",
        "activation",
        "residual_add",
        "constexpr_specialization",
        "tiling",
        "grouped_ordering",
        "fp32_accumulation",
    ],
    "tunables": {
        "BLOCK_M": [64, 128],
        "BLOCK_N": [64, 128, 256],
        "BLOCK_K": [32, 64],
        "GROUP_M": [8],
        "num_warps": [4, 8],
        "num_stages": [3, 4],
    },
    "verified_on": ["NVIDIA H200"],
    "attainment": {"4096x4096x4096 bf16 +bias silu": 0.4541, "source": "docs/results/templates_h200.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
    "template": True,
}

ACTIVATIONS = ("none", "relu", "gelu_tanh", "silu")


@triton.jit
def _apply_activation(x, ACTIVATION: tl.constexpr):
    if ACTIVATION == "relu":
        x = tl.maximum(x, 0.0)
    elif ACTIVATION == "gelu_tanh":
        u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        # tanh(u) written as 2 * sigmoid(2u) - 1
        x = 0.5 * x * (1.0 + (2.0 * tl.sigmoid(2.0 * u) - 1.0))
    elif ACTIVATION == "silu":
        x = x * tl.sigmoid(x)
    return x


@triton.jit
def _gemm_epilogue_kernel(
    a_ptr,
    b_ptr,
    bias_ptr,
    r_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_rm,
    stride_rn,
    stride_cm,
    stride_cn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
    ACTIVATION: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    HAS_RESIDUAL: tl.constexpr,
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

    # int64 row/column indices: rm * stride_am can pass 2**31
    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    # fp32 accumulator; the edge and K-tail masks below read 0, which adds nothing
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        a = tl.load(
            a_ptr + rm[:, None] * stride_am + ks[None, :] * stride_ak,
            mask=(rm[:, None] < M) & (ks[None, :] < K),
            other=0.0,
        )
        b = tl.load(
            b_ptr + ks[:, None] * stride_bk + rn[None, :] * stride_bn,
            mask=(ks[:, None] < K) & (rn[None, :] < N),
            other=0.0,
        )
        # default tl.dot precision: fp32 inputs go through TF32
        acc = tl.dot(a, b, acc)

    # Epilogue on the fp32 accumulator, still in registers.
    n_ok = rn < N
    out_mask = (rm[:, None] < M) & n_ok[None, :]
    # HAS_BIAS / HAS_RESIDUAL / ACTIVATION are constexprs: unused parts compile away. Order: +
    # bias, activation, + residual, then one rounding
    if HAS_BIAS:
        acc += tl.load(bias_ptr + rn, mask=n_ok, other=0.0).to(tl.float32)[None, :]
    acc = _apply_activation(acc, ACTIVATION)
    if HAS_RESIDUAL:
        r = tl.load(
            r_ptr + rm[:, None] * stride_rm + rn[None, :] * stride_rn, mask=out_mask, other=0.0
        )
        acc += r.to(tl.float32)
    tl.store(
        c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn,
        acc.to(c_ptr.dtype.element_ty),
        mask=out_mask,
    )


def gemm_epilogue(
    a: torch.Tensor,
    b: torch.Tensor,
    bias: torch.Tensor | None = None,
    activation: str = "none",
    residual: torch.Tensor | None = None,
    BLOCK_M: int = 64,
    BLOCK_N: int = 128,
    BLOCK_K: int = 64,
    GROUP_M: int = 8,
    num_warps: int = 4,
    num_stages: int = 3,
) -> torch.Tensor:
    assert a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[0], "expected A[M, K] @ B[K, N]"
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    r = residual if residual is not None else c  # never read when HAS_RESIDUAL is False
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _gemm_epilogue_kernel[grid](
        a,
        b,
        bias if bias is not None else c,
        r,
        c,
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        r.stride(0),
        r.stride(1),
        c.stride(0),
        c.stride(1),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        GROUP_M=GROUP_M,
        ACTIVATION=activation,
        HAS_BIAS=bias is not None,
        HAS_RESIDUAL=residual is not None,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return c
