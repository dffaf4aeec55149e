"""Gram matrix g = x^T x computing only the tiles on and above the diagonal, mirrored on store.

Op: g[D, D] = x[T, D]^T @ x[T, D], fp32 accumulation, one dtype.
Traffic: x once (T * D) plus g (D * D); FLOPs T * D * (D + 1) for the unique entries. The
GPTQ / Muon shapes are compute-bound.
Tiling: grid (tiles, tiles); program (i, j) with j < i returns at once, the others compute
g[I, J] = x[:, I]^T x[:, J] by walking T in BLOCK_T steps: both operands are loaded as
[BLOCK_T, BLOCK_D] row-major tiles (coalesced along D) and the left one is transposed in
registers (tl.trans) for tl.dot. An off-diagonal tile is stored twice, as g[I, J] and, transposed
in registers (tl.trans) so that both stores are row-major and coalesced, as g[J, I]; a diagonal
tile once. So half the products are computed and g is exactly symmetric off the diagonal blocks.
Offsets are int64 (T * D reaches 67M, D * D 359M elements).
fp32 uses input_precision="ieee". bf16 is checked on GPU only.
Tunables: BLOCK_D (64-128), BLOCK_T (32-64), num_warps (4-8), num_stages (2-4).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gram_matrix",
    "category": "linalg",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["symmetric_tile_skipping", "mirrored_store", "transposed_operand", "fp32_accumulator",
                   "edge_masks", "int64_offsets", "ieee_fp32_dot"],
    "tunables": {"BLOCK_D": [64, 128], "BLOCK_T": [32, 64], "num_warps": [4, 8], "num_stages": [2, 3, 4]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"linalg_gram_bf16": 0.8834, "linalg_gram_fp16": 0.8237, "linalg_gram_fp32": 0.7049, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _gram_kernel(x_ptr, g_ptr, T, D, stride_xt, stride_gd, BLOCK_D: tl.constexpr, BLOCK_T: tl.constexpr,
                 IEEE_FP32: tl.constexpr):
    # g = x.T @ x is symmetric: the grid covers all (I, J) tile pairs, but only tiles with J >= I
    # compute; the others exit at once
    pid_i = tl.program_id(0)
    pid_j = tl.program_id(1)
    if pid_j >= pid_i:
        offs_i = pid_i * BLOCK_D + tl.arange(0, BLOCK_D)
        offs_j = pid_j * BLOCK_D + tl.arange(0, BLOCK_D)
        offs_t = tl.arange(0, BLOCK_T)
        i_ok = offs_i < D
        j_ok = offs_j < D
        # [BLOCK_T, BLOCK_D] strips of columns I and J of x; the row index is int64 before it meets
        # the stride
        xi_ptrs = x_ptr + offs_t[:, None].to(tl.int64) * stride_xt + offs_i[None, :]
        xj_ptrs = x_ptr + offs_t[:, None].to(tl.int64) * stride_xt + offs_j[None, :]
        # fp32 accumulator; the T tail reads 0 on both operands
        acc = tl.zeros([BLOCK_D, BLOCK_D], dtype=tl.float32)
        for t0 in range(0, T, BLOCK_T):
            t_ok = (t0 + offs_t) < T
            xi = tl.load(xi_ptrs, mask=t_ok[:, None] & i_ok[None, :], other=0.0)
            xj = tl.load(xj_ptrs, mask=t_ok[:, None] & j_ok[None, :], other=0.0)
            # tl.trans(xi) is the [BLOCK_D, BLOCK_T] left operand (no copy in memory); fp32 inputs
            # use IEEE products, not TF32
            if IEEE_FP32:
                acc = tl.dot(tl.trans(xi), xj, acc, input_precision="ieee")
            else:
                acc = tl.dot(tl.trans(xi), xj, acc)
            xi_ptrs += BLOCK_T * stride_xt
            xj_ptrs += BLOCK_T * stride_xt
        out = acc.to(g_ptr.dtype.element_ty)
        ij_mask = i_ok[:, None] & j_ok[None, :]
        tl.store(g_ptr + offs_i[:, None].to(tl.int64) * stride_gd + offs_j[None, :], out, mask=ij_mask)
        if pid_j > pid_i:  # mirror: g[J, I] = g[I, J]^T, stored row-major (coalesced)
            ji_mask = j_ok[:, None] & i_ok[None, :]
            tl.store(g_ptr + offs_j[:, None].to(tl.int64) * stride_gd + offs_i[None, :], tl.trans(out), mask=ji_mask)


def linalg_gram(x: torch.Tensor, BLOCK_D: int = 128, BLOCK_T: int = 32, num_warps: int = 8,
                num_stages: int = 3) -> torch.Tensor:
    assert x.dim() == 2
    x = x.contiguous()
    T, D = x.shape
    # fp32 tiles take twice the bytes: smaller tiles
    if x.dtype == torch.float32:
        BLOCK_D, BLOCK_T = 64, 32
    if D < 1024:  # small D: more, smaller tiles
        BLOCK_D = 64
    BLOCK_D = min(BLOCK_D, max(16, triton.next_power_of_2(D)))
    g = torch.empty((D, D), dtype=x.dtype, device=x.device)
    tiles = triton.cdiv(D, BLOCK_D)
    _gram_kernel[(tiles, tiles)](x, g, T, D, x.stride(0), g.stride(0), BLOCK_D=BLOCK_D, BLOCK_T=BLOCK_T,
                                 IEEE_FP32=x.dtype == torch.float32, num_warps=num_warps, num_stages=num_stages)
    return g
