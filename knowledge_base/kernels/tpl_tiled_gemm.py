"""Tiled GEMM with grouped (L2-friendly) program ordering and fp32 accumulation.

Op: C[M, N] = A[M, K] @ B[K, N], any strides, fp16/bf16/fp32 inputs, output in C's dtype.
Traffic: minimal is (M*K + K*N + M*N) * elem bytes. With BM x BN tiles, A is re-read N/BN times
and B M/BM times from L2/DRAM; grouped ordering (GROUP_M rows of tiles walked column-major)
keeps a GROUP_M*BM x K panel of A and a K x BN panel of B hot in L2, so DRAM traffic stays near
the minimum for large shapes. Arithmetic intensity at large M=N=K is high (about 2*BM*BN /
((BM+BN)*elem) FLOP per byte of tile loads), so this kernel is compute-bound above the ridge.
Tiling: one program per BM x BN output tile; the K loop loads BM x BK and BK x BN tiles and
calls `tl.dot` (tensor cores: mma on Ampere, wgmma on Hopper), accumulating in fp32 registers.
Tails in M, N and K are masked (`other=0` is exact for the product). Offsets are int64 so
M*K > 2**31 does not overflow.
Tunables: BLOCK_M/N (64-256), BLOCK_K (32-128), GROUP_M (4-16), num_warps (4-8),
num_stages (2-5; shared memory is stages * (BM*BK + BK*BN) * elem bytes). `CONFIGS` lists
starting points for `triton.autotune(key=["M", "N", "K"])`.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gemm",
    "category": "matmul",
    "dtypes": ["fp16", "bf16", "fp32"],
    "techniques": [
        "tiling",
        "grouped_ordering",
        "fp32_accumulation",
        "tensor_cores",
        "masking",
        "int64_offsets",
    ],
    "tunables": {
        "BLOCK_M": [64, 128, 256],
        "BLOCK_N": [64, 128, 256],
        "BLOCK_K": [32, 64, 128],
        "GROUP_M": [4, 8, 16],
        "num_warps": [4, 8],
        "num_stages": [2, 3, 4, 5],
    },
    "verified_on": ["NVIDIA H200"],
    "attainment": {"4096x4096x4096 bf16": 0.7072, "source": "docs/results/templates_h200.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
    "template": True,
}

# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages): good first configs on sm_80/sm_90.
CONFIGS = [
    (128, 256, 64, 8, 8, 3),
    (128, 128, 64, 8, 4, 4),
    (128, 128, 32, 8, 4, 4),
    (64, 128, 64, 8, 4, 4),
    (64, 64, 64, 8, 4, 3),
]


@triton.jit
def _tiled_gemm_kernel(
    a_ptr,
    b_ptr,
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
):
    # Grouped ordering: walk GROUP_M tile-rows column by column so neighbours share operands in L2.
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    group_size = GROUP_M * num_pid_n
    first_m = (pid // group_size) * GROUP_M
    group_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_size) % group_m
    pid_n = (pid % group_size) // group_m

    # int64 row/column indices: rm * stride_am can pass 2**31
    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn

    # fp32 accumulator whatever the input dtype
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        # edge and K-tail masks: out-of-range elements read 0 and add nothing
        k_ok = (k0 + rk) < K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & k_ok[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & (rn[None, :] < N), other=0.0)
        # default tl.dot precision: fp32 inputs go through TF32
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def tiled_gemm(
    a: torch.Tensor,
    b: torch.Tensor,
    BLOCK_M: int = 128,
    BLOCK_N: int = 128,
    BLOCK_K: int = 64,
    GROUP_M: int = 8,
    num_warps: int = 4,
    num_stages: int = 4,
) -> torch.Tensor:
    assert a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[0], "expected A[M, K] @ B[K, N]"
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _tiled_gemm_kernel[grid](
        a,
        b,
        c,
        M,
        N,
        K,
        a.stride(0),
        a.stride(1),
        b.stride(0),
        b.stride(1),
        c.stride(0),
        c.stride(1),
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        BLOCK_K=BLOCK_K,
        GROUP_M=GROUP_M,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    return c
