"""Matrix-vector product y = a @ x on CUDA cores: BLOCK_M rows per program, fp32 partial sums.

Op: y[M] = a[M, K] @ x[K], one dtype, fp32 accumulation, one rounding at the end.
Traffic: a (M * K * elem) dominates; x (K) is re-read by every program but stays in L2. Two
FLOPs per element of a: far below the ridge point, so tensor cores buy nothing and the kernel is
written with elementwise multiply + row sums (which also keeps bf16 exact on the CPU
interpreter).
Tiling: each program owns BLOCK_M rows and walks K in BLOCK_K chunks, accumulating an fp32
[BLOCK_M, BLOCK_K] tile of products (no reduction inside the loop: the loop body is pure FMA),
then reduces along K once. Loads are contiguous along k (coalesced 16-byte vectors with
BLOCK_K >= 64). Row offsets are int64 (M * K passes 2^31 at the 70B shape only in bytes, but the
habit is cheap). Enough programs: M / BLOCK_M >= 448 for M >= 3584 with BLOCK_M = 8.
Tunables: BLOCK_M (4-16), BLOCK_K (128-512), num_warps (4-8), num_stages (2-4).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gemv",
    "category": "linalg",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["gemv", "rows_per_program", "fp32_accumulation", "deferred_reduction", "coalesced_loads",
                   "k_tail_mask", "int64_offsets"],
    "tunables": {"BLOCK_M": [4, 8, 16], "BLOCK_K": [128, 256, 512], "num_warps": [4, 8], "num_stages": [2, 3, 4]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"linalg_matvec_bf16": 0.7645, "linalg_matvec_fp16": 0.768, "linalg_matvec_fp32": 0.9164, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _matvec_kernel(a_ptr, x_ptr, y_ptr, M, K, stride_am, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    # y = A x: BLOCK_M rows of A per program, A streamed in [BLOCK_M, BLOCK_K] tiles; every program
    # re-reads x, which stays in L2
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_K)
    row_ok = rows < M
    a_ptrs = a_ptr + rows[:, None].to(tl.int64) * stride_am + cols[None, :]
    # no tl.dot (a single column would waste a tensor-core tile): fp32 multiply-adds into a 2-D
    # accumulator, reduced along K once at the end
    acc = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        # K tail: A and x read 0 there
        k_ok = (k0 + cols) < K
        a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0).to(tl.float32)
        x = tl.load(x_ptr + k0 + cols, mask=k_ok, other=0.0).to(tl.float32)
        acc += a * x[None, :]
        a_ptrs += BLOCK_K
    y = tl.sum(acc, axis=1)
    tl.store(y_ptr + rows, y.to(y_ptr.dtype.element_ty), mask=row_ok)


def linalg_matvec(a: torch.Tensor, x: torch.Tensor, BLOCK_M: int = 8, BLOCK_K: int = 256, num_warps: int = 4,
                  num_stages: int = 3) -> torch.Tensor:
    assert a.dim() == 2 and x.dim() == 1 and a.shape[1] == x.shape[0] and a.dtype == x.dtype
    a = a.contiguous()
    x = x.contiguous()
    M, K = a.shape
    BLOCK_K = min(BLOCK_K, max(16, triton.next_power_of_2(K)))
    y = torch.empty((M,), dtype=a.dtype, device=a.device)
    _matvec_kernel[(triton.cdiv(M, BLOCK_M),)](a, x, y, M, K, a.stride(0), BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K,
                                               num_warps=num_warps, num_stages=num_stages)
    return y
