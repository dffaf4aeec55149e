"""Bias add + exact (erf) GELU: the unfused epilogue of the first MLP projection in ViT and BERT."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "bias_gelu_erf"
CATEGORY = "fusion"
DESCRIPTION = """
Bias add followed by the exact GELU, on the output of an MLP up-projection x[M, N] with bias b[N]
(the epilogue left over when the GEMM runs without a fused bias, as in ViT / BERT encoders):
    h[i, j] = x[i, j] + b[j]
    y[i, j] = 0.5 * h[i, j] * (1 + erf(h[i, j] / sqrt(2)))
Output is [M, N] in x's dtype. h is not rounded: compute in fp32 and round once. "outlier" mode
puts rare values of a few thousand in x: y must tend to h for large positive h and to -0 / 0 for
large negative h, never NaN.
"""
ENTRY_POINT = "bias_gelu_erf"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "vit_l16_fc1_b64", "dims": {"M": 12608, "N": 4096}, "weight": 0.35, "phase": "prefill",
     "source": "ViT-L/16 MLP fc1 (1024 -> 4096, bias, exact GELU), batch 64 x 197 tokens"},
    {"name": "bert_large_fc1_b32", "dims": {"M": 16384, "N": 4096}, "weight": 0.25, "phase": "prefill",
     "source": "BERT-large intermediate dense (1024 -> 4096, bias, exact GELU), batch 32 x 512 tokens"},
    {"name": "vit_h14_fc1_b32", "dims": {"M": 8224, "N": 5120}, "weight": 0.25, "phase": "prefill",
     "source": "ViT-H/14 MLP fc1 (1280 -> 5120, bias, exact GELU), batch 32 x 257 tokens"},
    {"name": "vit_b16_fc1_b1_tail", "dims": {"M": 197, "N": 3072}, "weight": 0.15, "phase": "prefill",
     "source": "ViT-B/16 MLP fc1 (768 -> 3072), single image of 197 tokens (latency-bound, tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# Both sides round one fp32 result: at most one ulp apart (fp16 2^-10, bf16 2^-7 relative).
# atol covers 1 + erf(h / sqrt 2) cancelling for negative h, where fp32 itself is only good to
# ~1e-7 * |h|.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.gelu", "torch.nn.GELU", "torch.erf", "torch.erfc", "torch.special.erf",
             "torch.special.erfc", "torch.special.ndtr")


def bias_gelu_erf(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    h = x.float() + bias.float()
    return (0.5 * h * (1.0 + torch.erf(h * 0.7071067811865476))).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    M, N = dims["M"], dims["N"]
    x = maybe_outliers(randn((M, N), dtype, gen, std=1.5), mode, gen)
    bias = randn((N,), dtype, gen, std=0.5)
    return (x, bias)


def flops(dims, dtype):
    # bias add, scale, erf, add, two multiplies: about 6 per element
    return 6.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    # read x and b, write y
    e = elem_size(dtype)
    return 2.0 * dims["M"] * dims["N"] * e + dims["N"] * e
