"""GELU(tanh)-and-mul: the GeGLU gated activation of the Gemma MLP."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "gelu_tanh_and_mul"
CATEGORY = "fusion"
DESCRIPTION = """
Gated GELU (GeGLU, Gemma's "gelu_pytorch_tanh" MLP) on the fused gate/up projection output x[M, 2H]
(gate in the first H columns, up in the last H, as vLLM's gelu_tanh_and_mul lays them out):
    g = x[i, j],  u = x[i, H + j],  j < H
    out[i, j] = 0.5 * g * (1 + tanh(sqrt(2/pi) * (g + 0.044715 * g^3))) * u
Output is [M, H] in x's dtype. Compute in fp32 and round once. "outlier" mode puts rare values of
a few thousand in the gate half: g^3 reaches ~1e10 and the tanh must saturate (never NaN). The up
half stays O(1): 1 + tanh(z) cancels for negative g (the literal formula, as PyTorch and vLLM
evaluate it, is only good to ~1e-7 * |g| absolute there), and a 1000x up value would scale that
legitimate error past the tolerance.
"""
ENTRY_POINT = "gelu_tanh_and_mul"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "gemma2_9b_prefill", "dims": {"M": 8192, "H": 14336}, "weight": 0.4, "phase": "prefill",
     "source": "Gemma-2-9B MLP GeGLU (intermediate 14336), 8192-token prefill"},
    {"name": "gemma2_9b_decode", "dims": {"M": 32, "H": 14336}, "weight": 0.25, "phase": "decode",
     "source": "Gemma-2-9B MLP GeGLU, batch-32 decode"},
    {"name": "gemma2_27b_prefill", "dims": {"M": 4096, "H": 36864}, "weight": 0.2, "phase": "prefill",
     "source": "Gemma-2-27B MLP GeGLU (intermediate 36864), 4096-token prefill"},
    {"name": "gemma2_2b_decode_tail", "dims": {"M": 13, "H": 9216}, "weight": 0.15, "phase": "decode",
     "source": "Gemma-2-2B MLP GeGLU (intermediate 9216), batch 13 decode (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "H": 64}},
    {"name": "tail", "dims": {"M": 7, "H": 1000}},
]
# One rounding of an fp32 result on each side: one ulp apart (fp16 2^-10, bf16 2^-7 relative);
# atol covers the fp32 noise of 1 + tanh(z) cancelling for negative g.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.gelu", "torch.nn.GELU", "torch.tanh", "torch.nn.functional.tanh",
             "torch.nn.functional.glu")


def gelu_tanh_and_mul(x: torch.Tensor) -> torch.Tensor:
    H = x.shape[-1] // 2
    g = x[:, :H].float()
    u = x[:, H:].float()
    y = 0.5 * g * (1.0 + torch.tanh(0.7978845608028654 * (g + 0.044715 * g * g * g))) * u
    return y.to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    M, H = dims["M"], dims["H"]
    gate = maybe_outliers(randn((M, H), dtype, gen, std=2.0), mode, gen)
    up = randn((M, H), dtype, gen, std=2.0)
    return (torch.cat((gate, up), dim=1),)


def flops(dims, dtype):
    # cube, fma, scale, tanh, add, two multiplies, the product: about 8 per output element
    return 8.0 * dims["M"] * dims["H"]


def min_bytes(dims, dtype):
    # read [M, 2H], write [M, H]
    return 3.0 * dims["M"] * dims["H"] * elem_size(dtype)
