"""c = tril(a) @ b, batched, skipping every tile of a above the diagonal.

Op: c[z] = tril(a[z]) @ b[z], a [Z, L, L], b [Z, L, N]; fp32 accumulation, one dtype.
Traffic: the lower triangle of a (L(L+1)/2 per batch), b and c. FLOPs N * L(L+1) per batch:
half of a dense product, and the kernel does (about) only that half.
Tiling: program (m-tile, n-tile, z) computes rows [m0, m0 + BLOCK_M) of c[z] and walks K only up
to the end of its row block (k < m0 + BLOCK_M): the tiles above the diagonal are never loaded.
Within the K blocks that cross the diagonal the a tile is masked with k <= i (plus the L tail),
so the garbage upper triangle never enters the sum. BLOCK_K == BLOCK_M keeps exactly one
diagonal block per row block. Batch offsets are int64 (Z * L * L passes 2^31 at the
Mamba-2 shape). fp32 uses input_precision="ieee". bf16 is checked on GPU only.
Tunables: BLOCK_M (= BLOCK_K, 32-64), BLOCK_N (32-128, cover N = 64 / 128 in one tile when it fits),
num_warps (4), num_stages (2-4).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "triangular_gemm",
    "category": "linalg",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["triangular_tile_skipping", "diagonal_block_mask", "batched_gemm", "fp32_accumulator",
                   "edge_masks", "int64_offsets", "ieee_fp32_dot"],
    "tunables": {"BLOCK_M": [32, 64], "BLOCK_N": [32, 64, 128], "num_warps": [4, 8], "num_stages": [2, 3, 4]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"linalg_tril_matmul_bf16": 0.5564, "linalg_tril_matmul_fp16": 0.5584, "linalg_tril_matmul_fp32": 0.343, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _tril_matmul_kernel(a_ptr, b_ptr, c_ptr, L, N, stride_az, stride_am, stride_bz, stride_bk, stride_cz, stride_cm,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, IEEE_FP32: tl.constexpr):
    # c = tril(a) @ b per batch. Axis 0: a BLOCK_M row tile of c; axis 1: a BLOCK_N column tile;
    # axis 2: the batch. Row tile i needs a's columns below (i + 1) * BLOCK_M only, so the upper
    # triangle is never read
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    z = tl.program_id(2).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # the K step equals BLOCK_M, so the diagonal block is exactly one K step
    offs_k = tl.arange(0, BLOCK_M)
    m_ok = offs_m < L
    n_ok = offs_n < N
    a_base = a_ptr + z * stride_az + offs_m[:, None] * stride_am
    b_base = b_ptr + z * stride_bz + offs_n[None, :]

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    # full blocks strictly left of the diagonal block: no triangle mask needed
    for k0 in range(0, pid_m * BLOCK_M, BLOCK_M):
        ks = k0 + offs_k
        # ks < pid_m * BLOCK_M <= L here: only the row edge of a and the column edge of b need
        # masks
        a = tl.load(a_base + ks[None, :], mask=m_ok[:, None], other=0.0)
        b = tl.load(b_base + ks[:, None] * stride_bk, mask=n_ok[None, :], other=0.0)
        if IEEE_FP32:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
    # the diagonal block: keep k <= i
    ks = pid_m * BLOCK_M + offs_k
    keep = (ks[None, :] <= offs_m[:, None]) & m_ok[:, None]
    a = tl.load(a_base + ks[None, :], mask=keep, other=0.0)
    # K tail of b; a's mask (k <= i < L) already covers its own
    b = tl.load(b_base + ks[:, None] * stride_bk, mask=(ks < L)[:, None] & n_ok[None, :], other=0.0)
    if IEEE_FP32:
        acc = tl.dot(a, b, acc, input_precision="ieee")
    else:
        acc = tl.dot(a, b, acc)

    c_ptrs = c_ptr + z * stride_cz + offs_m[:, None] * stride_cm + offs_n[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def linalg_tril_matmul(a: torch.Tensor, b: torch.Tensor, BLOCK_M: int = 64, BLOCK_N: int = 64, num_warps: int = 4,
                       num_stages: int = 3) -> torch.Tensor:
    assert a.dim() == 3 and b.dim() == 3 and a.shape[1] == a.shape[2] == b.shape[1] and a.dtype == b.dtype
    a = a.contiguous()
    b = b.contiguous()
    Z, L, _ = a.shape
    N = b.shape[2]
    # fp32 tiles take twice the registers and shared memory: narrower column tiles
    BLOCK_N = min(BLOCK_N if a.dtype != torch.float32 else 32, max(16, triton.next_power_of_2(N)))
    if L < 128:  # short chunks: smaller diagonal blocks waste less of the triangle
        BLOCK_M = 32
    c = torch.empty((Z, L, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(L, BLOCK_M), triton.cdiv(N, BLOCK_N), Z)
    _tril_matmul_kernel[grid](a, b, c, L, N, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                              c.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, IEEE_FP32=a.dtype == torch.float32,
                              num_warps=num_warps, num_stages=num_stages)
    return c
