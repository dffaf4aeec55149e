"""Mamba-2 gated group RMSNorm: h = x * silu(z), RMS-normalised per group of G channels, * w.

Op: h = x * z / (1 + exp(-z)) in fp32 (not rounded); out = h * rsqrt(mean_group(h^2) + eps) * w,
eps = 1e-5, one rounding. Groups are G consecutive channels of a token (ngroups = E / G).
Traffic: read x and z, write out (3 * M * E * elem) + w once. Unfused, PyTorch materialises
silu(z), h and the normalised h: ~9 * M * E * elem.
Tiling: one program per (token, group). A group of up to BLOCK_G channels (every Mamba-2 config:
1024-8192) is one tile held in registers: the gate, the sum of squares and the scaled store use
a single read of x and z. Larger groups fall back to a two-pass chunked loop that recomputes h
(cache hits). Token offsets int64.
Tunables: BLOCK_G (power of two >= G for the one-tile path), num_warps (4-16; by default 4 for
tiles up to 2048, else 8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "fused_gated_norm",
    "category": "fusion",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["one_program_per_row_group", "row_in_registers", "chunked_row_fallback", "tail_mask",
                   "fp32_accumulation", "overflow_safe_sigmoid", "int64_offsets"],
    "tunables": {"BLOCK_G": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"mamba2_gated_rmsnorm_bf16": 0.4329, "mamba2_gated_rmsnorm_fp16": 0.3803, "mamba2_gated_rmsnorm_fp32": 0.5407, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}

EPS = 1e-5


@triton.jit
def _gated(x_ptr, z_ptr, offs, mask):
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    z = tl.load(z_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    # gate before the norm: h = x * silu(z), in fp32
    return x * (z / (1.0 + tl.exp(-z)))


@triton.jit
def _gated_rmsnorm_kernel(x_ptr, z_ptr, w_ptr, out_ptr, E, G, eps, BLOCK_G: tl.constexpr, ONE_TILE: tl.constexpr):
    # axis 0: a row; axis 1: one group of G channels. The RMS is taken per group, and each program
    # owns one (row, group)
    row = tl.program_id(0).to(tl.int64)
    g0 = tl.program_id(1) * G
    base = row * E + g0
    offs = tl.arange(0, BLOCK_G)
    dtype = out_ptr.dtype.element_ty

    # the group fits in one block: one load, kept in registers
    if ONE_TILE:
        mask = offs < G
        h = _gated(x_ptr, z_ptr, base + offs, mask)
        rstd = 1.0 / tl.sqrt(tl.sum(h * h, axis=0) / G + eps)
        w = tl.load(w_ptr + g0 + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + base + offs, (h * rstd * w).to(dtype), mask=mask)
    # long groups: one pass for the sum of squares, a second to write, recomputing h from x and z
    # each time
    else:
        acc = tl.zeros([BLOCK_G], tl.float32)
        for start in range(0, G, BLOCK_G):
            cols = start + offs
            h = _gated(x_ptr, z_ptr, base + cols, cols < G)
            acc += h * h
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / G + eps)
        for start in range(0, G, BLOCK_G):
            cols = start + offs
            mask = cols < G
            h = _gated(x_ptr, z_ptr, base + cols, mask)
            w = tl.load(w_ptr + g0 + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(out_ptr + base + cols, (h * rstd * w).to(dtype), mask=mask)


def mamba2_gated_rmsnorm(x: torch.Tensor, z: torch.Tensor, weight: torch.Tensor, group_size: int,
                         BLOCK_G: int = 8192, num_warps: int | None = None) -> torch.Tensor:
    assert x.dim() == 2 and x.shape == z.shape and x.shape[1] % group_size == 0
    x = x.contiguous()
    z = z.contiguous()
    M, E = x.shape
    out = torch.empty_like(x)
    block = min(BLOCK_G, triton.next_power_of_2(group_size))
    if num_warps is None:  # H200 (torch 2.11, triton 3.6, 2026-11-29): 4 warps for groups of 1024, 8 for 5120
        num_warps = 4 if block <= 2048 else 8
    _gated_rmsnorm_kernel[(M, E // group_size)](x, z, weight.contiguous(), out, E, group_size, EPS, BLOCK_G=block,
                                                ONE_TILE=group_size <= block, num_warps=num_warps)
    return out
