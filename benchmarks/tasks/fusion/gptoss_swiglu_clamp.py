"""Clamped SwiGLU with interleaved gate/up columns: the MoE expert activation of GPT-OSS."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "gptoss_swiglu_clamp"
CATEGORY = "fusion"
DESCRIPTION = """
GPT-OSS's expert activation on the gate/up projection output x[M, 2I], whose columns are
INTERLEAVED (gate at even columns, up at odd columns), with alpha = 1.702 and limit = 7.0:
    g = min(x[i, 2j], limit)                       (gate clamped from above only)
    u = min(max(x[i, 2j + 1], -limit), limit)      (up clamped on both sides)
    out[i, j] = (u + 1) * g * sigmoid(alpha * g),   sigmoid(v) = 1 / (1 + exp(-v)),   j < I
Output is [M, I] in x's dtype; compute in fp32 and round once. M counts (token, expert) pairs
after top-4 routing. Inputs have std 3, so a few percent of values hit the clamps; "outlier" mode
puts rare values of a few thousand in x: large negative gates must give -0/0, never NaN.
"""
ENTRY_POINT = "gptoss_swiglu_clamp"
DTYPES = ("fp32", "fp16", "bf16")
ALPHA = 1.702
LIMIT = 7.0
SHAPES = [
    {"name": "gptoss_120b_prefill", "dims": {"M": 32768, "I": 2880}, "weight": 0.4, "phase": "prefill",
     "source": "GPT-OSS-120B expert activation (intermediate 2880), 8192-token prefill x top-4 experts"},
    {"name": "gptoss_120b_decode", "dims": {"M": 128, "I": 2880}, "weight": 0.3, "phase": "decode",
     "source": "GPT-OSS-120B expert activation, batch-32 decode x top-4 experts"},
    {"name": "gptoss_20b_prefill", "dims": {"M": 16384, "I": 2880}, "weight": 0.15, "phase": "prefill",
     "source": "GPT-OSS-20B expert activation (intermediate 2880), 4096-token prefill x top-4 experts"},
    {"name": "gptoss_20b_decode_tail", "dims": {"M": 52, "I": 2880}, "weight": 0.15, "phase": "decode",
     "source": "GPT-OSS-20B expert activation, batch 13 decode x top-4 experts (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "I": 64}},
    {"name": "tail", "dims": {"M": 7, "I": 500}},
]
# One rounding of an fp32 result on each side: one ulp apart (fp16 2^-10, bf16 2^-7 relative),
# plus fp32 noise from exp/divide that atol absorbs near zero.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.silu", "torch.nn.SiLU", "torch.sigmoid", "torch.nn.functional.sigmoid",
             "torch.nn.functional.glu", "torch.clamp", "torch.clip", "torch.nn.functional.hardtanh")


def gptoss_swiglu_clamp(x: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    g = xf[:, 0::2].clamp(max=LIMIT)
    u = xf[:, 1::2].clamp(min=-LIMIT, max=LIMIT)
    glu = g / (1.0 + torch.exp(-ALPHA * g))
    return ((u + 1.0) * glu).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["M"], 2 * dims["I"]), dtype, gen, std=3.0)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # two clamps (3 compares), scale, exp, add, divide, add, multiply: about 9 per output element
    return 9.0 * dims["M"] * dims["I"]


def min_bytes(dims, dtype):
    # read [M, 2I], write [M, I]
    return 3.0 * dims["M"] * dims["I"] * elem_size(dtype)
