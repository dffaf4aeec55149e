"""QK-norm: per-head RMSNorm of q and k in one launch, many short rows per program.

Op: for every head vector x (length D) of q[T, HQ, D] and k[T, HKV, D]:
out = x * rsqrt(mean(x^2) + eps) * w, with q_weight for q and k_weight for k; fp32, one rounding.
Traffic: q and k read and written once, 2 * T * (HQ + HKV) * D * elem, plus two D-vectors.
Bandwidth-bound, but the rows are short (D = 128): one row per program would leave each program
a 256-byte load and make the launch/scheduling overhead dominate. So each program normalises a
[BLOCK_R, BLOCK_D] tile of BLOCK_R consecutive head vectors (q and k are contiguous, so a tile is
one contiguous BLOCK_R * D stretch: fully coalesced), with the row sums done by tl.sum(axis=1).
q tiles come first in the grid, k tiles after them: one launch covers both (decode batches are
launch-bound, so this halves their cost). Row offsets are int64.
Tunables: BLOCK_R (power of two, 4-64 rows per program), num_warps (2-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "fused_head_norm",
    "category": "fusion",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["many_rows_per_program", "2d_tile_row_reduction", "q_and_k_in_one_launch", "tail_mask",
                   "fp32_accumulation", "int64_offsets"],
    "tunables": {"BLOCK_R": [4, 8, 16, 32, 64], "num_warps": [2, 4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"qk_rmsnorm_bf16": 0.4801, "qk_rmsnorm_fp16": 0.468, "qk_rmsnorm_fp32": 0.4759, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}

EPS = 1e-6


@triton.jit
def _norm_tile(x_ptr, w_ptr, o_ptr, tile, R, D, eps, BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # a tile is BLOCK_R (token, head) rows of D; the whole head dim fits in one block (BLOCK_D =
    # next power of two of D)
    rows = tile.to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_D)
    cmask = cols < D
    mask = (rows[:, None] < R) & cmask[None, :]
    offs = rows[:, None] * D + cols[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    # per-row RMS in fp32; masked columns read 0 and add nothing
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / D + eps)
    w = tl.load(w_ptr + cols, mask=cmask, other=0.0).to(tl.float32)
    tl.store(o_ptr + offs, (x * rstd[:, None] * w[None, :]).to(o_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _qk_rmsnorm_kernel(q_ptr, k_ptr, qw_ptr, kw_ptr, qo_ptr, ko_ptr, RQ, RK, D, q_tiles, eps, BLOCK_R: tl.constexpr,
                       BLOCK_D: tl.constexpr):
    # q and k share one launch: programs below q_tiles normalise q's rows, the rest k's, with their
    # own weights
    pid = tl.program_id(0)
    if pid < q_tiles:
        _norm_tile(q_ptr, qw_ptr, qo_ptr, pid, RQ, D, eps, BLOCK_R, BLOCK_D)
    else:
        _norm_tile(k_ptr, kw_ptr, ko_ptr, pid - q_tiles, RK, D, eps, BLOCK_R, BLOCK_D)


def qk_rmsnorm(q: torch.Tensor, k: torch.Tensor, q_weight: torch.Tensor, k_weight: torch.Tensor, BLOCK_R: int = 16,
               num_warps: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    assert q.dim() == 3 and k.dim() == 3 and q.shape[2] == k.shape[2]
    q = q.contiguous()
    k = k.contiguous()
    D = q.shape[2]
    RQ = q.shape[0] * q.shape[1]
    RK = k.shape[0] * k.shape[1]
    q_out = torch.empty_like(q)
    k_out = torch.empty_like(k)
    q_tiles = triton.cdiv(RQ, BLOCK_R)
    grid = (q_tiles + triton.cdiv(RK, BLOCK_R),)
    _qk_rmsnorm_kernel[grid](q, k, q_weight.contiguous(), k_weight.contiguous(), q_out, k_out, RQ, RK, D, q_tiles,
                             EPS, BLOCK_R=BLOCK_R, BLOCK_D=triton.next_power_of_2(D), num_warps=num_warps)
    return q_out, k_out
