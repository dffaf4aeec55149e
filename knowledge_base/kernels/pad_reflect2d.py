"""Reflection 2-D padding of NCHW maps: output-driven copy with mirrored source indices.

Op: y[b, c, i, j] = x[b, c, r(i - p, H), r(j - p, W)] with r(k, n) = -k below 0 and 2(n - 1) - k
past the end (the edge is not repeated); output [B, C, H + 2p, W + 2p].
Traffic: x read once (the mirrored border re-reads a few rows/columns from L1/L2), y written once:
(H W + Ho Wo) * B * C * elem. Bandwidth-bound.
Tiling: 2-D grid (plane b * C + c, BLOCK outputs of the output plane in row-major order); each
lane reflects its row and column index with two selects each, then loads and stores. Interior
lanes read contiguous runs; stores are contiguous. Plane offsets int64.
Tunables: BLOCK (power of two, 256-4096), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "pad_2d",
    "category": "spatial",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["output_driven_gather", "program_per_plane_block", "index_reflection", "tail_mask",
                   "int64_offsets"],
    "tunables": {"BLOCK": [256, 1024, 2048, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"pad_reflect2d_bf16": 0.4526, "pad_reflect2d_fp16": 0.4539, "pad_reflect2d_fp32": 0.7624, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _pad_reflect_kernel(x_ptr, y_ptr, H, W, P, BLOCK: tl.constexpr):
    # axis 0: one (batch, channel) plane; axis 1: a BLOCK of output pixels, each mapped back to the
    # input pixel it copies
    plane = tl.program_id(0).to(tl.int64)
    Ho = H + 2 * P
    Wo = W + 2 * P
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    ok = offs < Ho * Wo
    h = offs // Wo - P
    w = offs % Wo - P
    # reflect without repeating the edge (PyTorch's 'reflect'): -1 -> 1 and H -> H - 2. pad < H, W
    # (asserted), so one reflection always lands inside
    h = tl.where(h < 0, -h, h)
    h = tl.where(h >= H, 2 * (H - 1) - h, h)
    w = tl.where(w < 0, -w, w)
    w = tl.where(w >= W, 2 * (W - 1) - w, w)
    # after reflection every index is in range: only the block tail needs a mask
    v = tl.load(x_ptr + plane * H * W + h * W + w, mask=ok, other=0.0)
    tl.store(y_ptr + plane * Ho * Wo + offs, v, mask=ok)


def pad_reflect2d(x: torch.Tensor, pad: int, BLOCK: int = 2048, num_warps: int = 4) -> torch.Tensor:
    assert x.dim() == 4 and 0 < pad < min(x.shape[2], x.shape[3])
    x = x.contiguous()
    B, C, H, W = x.shape
    Ho, Wo = H + 2 * pad, W + 2 * pad
    y = torch.empty((B, C, Ho, Wo), dtype=x.dtype, device=x.device)
    block = min(BLOCK, triton.next_power_of_2(Ho * Wo))
    _pad_reflect_kernel[(B * C, triton.cdiv(Ho * Wo, block))](x, y, H, W, pad, BLOCK=block, num_warps=num_warps)
    return y
