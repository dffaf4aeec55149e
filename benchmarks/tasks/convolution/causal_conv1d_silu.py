"""Causal depthwise conv1d (kernel 4) + bias + SiLU: the short convolution of Mamba / Mamba-2 blocks."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, rand, randn

NAME = "causal_conv1d_silu"
CATEGORY = "convolution"
DESCRIPTION = """
Mamba's causal_conv1d_fn(x, weight, bias, activation="silu") on x[B, D, L] (channels-first,
contiguous), depthwise weight[D, 4] and bias[D]:
    pre[b, d, t] = bias[d] + sum_{k=0..3} weight[d, k] * x[b, d, t - 3 + k]   (x at t < 0 is 0)
    y[b, d, t]   = pre / (1 + exp(-pre))                                     (SiLU)
Output [B, D, L] in x's dtype; all inputs share the dtype. Compute in fp32 and round once. Each
sequence starts from zero state: the first three outputs of a row see the zero padding, and no
position sees the future. "outlier" mode scales rare values of x by 10-1000x (the SiLU must
saturate, not produce NaN).
"""
ENTRY_POINT = "causal_conv1d_silu"
DTYPES = ("fp32", "fp16", "bf16")
PEAK = "vector"  # a depthwise 4-tap filter: 8 FLOPs per element, no tensor-core GEMM inside
KERNEL = 4
BASELINE = "causal_conv1d_silu_baseline"
SHAPES = [
    {"name": "mamba_2p8b_prefill", "dims": {"B": 8, "D": 5120, "L": 2048}, "weight": 0.4, "phase": "prefill",
     "source": "Mamba-2.8B conv1d (d_inner 5120, d_conv 4), 8 x 2048-token prefill"},
    {"name": "falcon_mamba_7b_prefill", "dims": {"B": 4, "D": 8192, "L": 4096}, "weight": 0.3, "phase": "prefill",
     "source": "Falcon-Mamba-7B conv1d (d_inner 8192), 4 x 4096-token prefill"},
    {"name": "mamba2_2p7b_prompt_tail", "dims": {"B": 1, "D": 5376, "L": 1000}, "weight": 0.3, "phase": "prefill",
     "source": "Mamba-2-2.7B conv1d over x|B|C (5120 + 2 x 128 = 5376 channels), one 1000-token prompt (tail)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "D": 6, "L": 64}},
    {"name": "tail", "dims": {"B": 1, "D": 5, "L": 203}},
]
# fp32: four fma-able products plus SiLU; association and exp differ by an ulp or two. With
# outliers a pre-activation near 1 can be the sum of terms of 1000: its rounding is ~|terms| x 2^-24
# per addition in either order, so fp32 adds terms x 2^-20 (an H200 sweep, 2026-12-03: 2e-5 off on
# such an element, the honest solution). SiLU's slope is at most 1.1, so the pre-activation's bound
# carries over. fp16/bf16: one rounding of the fp32 result on each side.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5, "terms": 2**-20},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.conv1d", "torch.conv1d", "torch.nn.Conv1d", "torch.convolution",
             "torch.nn.functional.silu", "torch.sigmoid", "torch.nn.functional.unfold", "torch.Tensor.unfold",
             "torch.nn.functional.pad", "torch.cumsum")


def causal_conv1d_silu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    L = x.shape[-1]
    xp = torch.nn.functional.pad(x.float(), (KERNEL - 1, 0))
    w = weight.float()
    pre = bias.float()[None, :, None].expand(x.shape[0], -1, L)
    for k in range(KERNEL):
        pre = pre + w[None, :, k, None] * xp[:, :, k:k + L]
    return (pre / (1.0 + torch.exp(-pre))).to(x.dtype)


def causal_conv1d_silu_baseline(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """mamba_ssm's PyTorch fallback (grouped conv1d, then SiLU), timed as the eager baseline."""
    L = x.shape[-1]
    y = torch.nn.functional.conv1d(x, weight.unsqueeze(1), bias, padding=KERNEL - 1, groups=x.shape[1])
    return torch.nn.functional.silu(y[..., :L])


def error_terms(x, weight, bias):
    """sum_k |weight[d, k]| |x[b, d, t - 3 + k]| + |bias[d]| per output element (see TOLERANCE)."""
    L = x.shape[-1]
    xp = torch.nn.functional.pad(x.float().abs(), (KERNEL - 1, 0))
    w = weight.float().abs()
    total = bias.float().abs()[None, :, None].expand(x.shape[0], -1, L)
    for k in range(KERNEL):
        total = total + w[None, :, k, None] * xp[:, :, k:k + L]
    return total


def make_inputs(dims, dtype, mode, gen):
    B, D, L = dims["B"], dims["D"], dims["L"]
    x = maybe_outliers(randn((B, D, L), dtype, gen), mode, gen)
    # nn.Conv1d's default init for fan_in = 4: uniform(-1/2, 1/2)
    weight = rand((D, KERNEL), dtype, gen, low=-0.5, high=0.5)
    bias = rand((D,), dtype, gen, low=-0.5, high=0.5)
    return (x, weight, bias)


def flops(dims, dtype):
    # 4 multiply-adds, bias, SiLU (negate, exp, add, divide): about 13 per output
    return 13.0 * dims["B"] * dims["D"] * dims["L"]


def min_bytes(dims, dtype):
    B, D, L = dims["B"], dims["D"], dims["L"]
    return (2.0 * B * D * L + D * (KERNEL + 1)) * elem_size(dtype)
