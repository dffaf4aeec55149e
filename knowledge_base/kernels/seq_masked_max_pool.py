"""Masked max over valid tokens, y[b] = max of x[b, :lengths[b]]: padding is never read.

Op: x[B, T, D] right-padded, lengths[B] int64 (>= 1); y[b, d] = max_{t < len_b} x[b, t, d], exact.
Traffic: only the valid tokens' rows are read (sum(len) * D * elem), y written once:
bandwidth-bound.
Tiling: 2-D grid (sequence b, BLOCK_D block of features). The program walks tokens 0 .. len_b - 1
in [BLOCK_T, BLOCK_D] tiles, masked lanes loading -inf (tokens past len_b are never fetched), and
keeps a running elementwise max; one reduction over the token axis at the end. Compared in fp32,
exact for fp16/bf16. Offsets int64.
Tunables: BLOCK_T (power of two, 8-64), BLOCK_D (power of two, 64-512), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "masked_segment_reduction",
    "category": "pooling",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["varlen_lengths", "skip_padding_reads", "column_reduce_axis0", "neg_inf_padding",
                   "tail_mask", "int64_offsets"],
    "tunables": {"BLOCK_T": [8, 16, 32, 64], "BLOCK_D": [64, 128, 256, 512], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"seq_masked_max_pool_bf16": 0.5279, "seq_masked_max_pool_fp16": 0.531, "seq_masked_max_pool_fp32": 0.5996, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _masked_max_kernel(x_ptr, len_ptr, y_ptr, T, D, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    # axis 0: a sequence; axis 1: a BLOCK_D slice of the features
    b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    col_ok = cols < D
    n = tl.load(len_ptr + b)
    x_seq = x_ptr + b * T * D
    offs_t = tl.arange(0, BLOCK_T)
    acc = tl.full([BLOCK_T, BLOCK_D], float("-inf"), tl.float32)
    # the loop stops at the sequence's length: padding tokens are never read
    for start in range(0, n, BLOCK_T):
        toks = start + offs_t
        mask = (toks[:, None] < n) & col_ok[None, :]
        # tail tokens read -inf, which never wins the max; the [BLOCK_T, BLOCK_D] running max is
        # folded over tokens once at the end
        v = tl.load(x_seq + toks[:, None] * D + cols[None, :], mask=mask, other=float("-inf")).to(tl.float32)
        acc = tl.maximum(acc, v)
    tl.store(y_ptr + b * D + cols, tl.max(acc, axis=0).to(y_ptr.dtype.element_ty), mask=col_ok)


def seq_masked_max_pool(x: torch.Tensor, lengths: torch.Tensor, BLOCK_T: int = 32, BLOCK_D: int = 128,
                        num_warps: int = 4) -> torch.Tensor:
    assert x.dim() == 3 and lengths.shape == (x.shape[0],)
    x, lengths = x.contiguous(), lengths.contiguous()
    B, T, D = x.shape
    y = torch.empty((B, D), dtype=x.dtype, device=x.device)
    block_d = min(BLOCK_D, triton.next_power_of_2(D))
    _masked_max_kernel[(B, triton.cdiv(D, block_d))](x, lengths, y, T, D, BLOCK_T=BLOCK_T, BLOCK_D=block_d,
                                                     num_warps=num_warps)
    return y
