"""Causal depthwise conv1d (4 taps) + bias + SiLU over x[B, D, L]: one pass, taps from four shifted loads.

Op: y[b, d, t] = silu(bias[d] + sum_k w[d, k] * x[b, d, t - 3 + k]), zero left padding.
Traffic: x read once from DRAM (the four shifted windows overlap and hit L1), y written once,
the tiny weight/bias per row: 2 * B * D * L * elem. Bandwidth-bound: 13 FLOPs per element.
Tiling: 2-D grid (row b * D + d, BLOCK_L block of time steps). A program loads its row's four
weights and bias once (scalars), then four masked loads of the same block shifted by 0..3
steps (t - 3 + k < 0 loads 0: the causal padding, with no padded copy of x). fp32 math, SiLU as
pre / (1 + exp(-pre)) (saturates, no NaN), one rounding. Row offsets int64.
Tunables: BLOCK_L (power of two, 256-4096), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "depthwise_conv1d",
    "category": "convolution",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["program_per_row_block", "shifted_window_loads", "implicit_causal_padding",
                   "fused_bias_activation", "fp32_compute", "tail_mask", "int64_offsets"],
    "tunables": {"BLOCK_L": [256, 1024, 2048, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"causal_conv1d_silu_bf16": 0.4831, "causal_conv1d_silu_fp16": 0.4852, "causal_conv1d_silu_fp32": 0.81, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _causal_conv1d_silu_kernel(x_ptr, w_ptr, b_ptr, y_ptr, D, L, KW: tl.constexpr, BLOCK_L: tl.constexpr):
    # axis 0: one (batch, channel) row of x [B, D, L] (depthwise: each channel has its own KW
    # taps); axis 1: a BLOCK_L block of time steps
    row = tl.program_id(0)
    t = tl.program_id(1) * BLOCK_L + tl.arange(0, BLOCK_L)
    t_ok = t < L
    ch = row % D
    x_row = x_ptr + row.to(tl.int64) * L
    # fp32 accumulator, starting from the channel's bias
    acc = tl.zeros([BLOCK_L], tl.float32) + tl.load(b_ptr + ch).to(tl.float32)
    # causal: output t sees inputs t - KW + 1 .. t; the taps are unrolled (KW is small, e.g. 4)
    for k in tl.static_range(KW):
        src = t - (KW - 1) + k
        # src < 0 is the causal left padding: reads 0
        xv = tl.load(x_row + src, mask=t_ok & (src >= 0), other=0.0).to(tl.float32)
        acc += tl.load(w_ptr + ch * KW + k).to(tl.float32) * xv
    # fused SiLU in fp32
    y = acc / (1.0 + tl.exp(-acc))
    tl.store(y_ptr + row.to(tl.int64) * L + t, y.to(y_ptr.dtype.element_ty), mask=t_ok)


def causal_conv1d_silu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, BLOCK_L: int = 1024,
                       num_warps: int = 4) -> torch.Tensor:
    assert x.dim() == 3 and weight.dim() == 2 and weight.shape[0] == x.shape[1]
    x, weight, bias = x.contiguous(), weight.contiguous(), bias.contiguous()
    B, D, L = x.shape
    y = torch.empty_like(x)
    block = min(BLOCK_L, triton.next_power_of_2(L))
    _causal_conv1d_silu_kernel[(B * D, triton.cdiv(L, block))](x, weight, bias, y, D, L, KW=weight.shape[1],
                                                               BLOCK_L=block, num_warps=num_warps)
    return y
