"""Exact (erf) GELU, as in the MLPs of ViT, BERT and Falcon."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "gelu_erf"
CATEGORY = "activation"
DESCRIPTION = """
Elementwise exact GELU (nn.GELU() with approximate="none") on a 2-D tensor x[M, N]:
    y = 0.5 * x * (1 + erf(x / sqrt(2)))
Output has x's shape and dtype. Compute in fp32 and round once to the output dtype. The tanh
approximation is a different function: it is off by up to 4.7e-4 (near |x| = 2.7), which the
fp32 tolerance rejects. Inputs in "outlier" mode reach magnitudes of a few thousand: the result
must stay finite (y -> x for large positive x, y -> -0 for large negative x).
"""
ENTRY_POINT = "gelu_erf"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "falcon_7b_mlp_prefill", "dims": {"M": 4096, "N": 18176}, "weight": 0.4, "phase": "prefill",
     "source": "Falcon-7B MLP activation (hidden 4544 -> 18176, exact GELU), 4096-token prefill"},
    {"name": "vit_l14_mlp_b64", "dims": {"M": 16448, "N": 4096}, "weight": 0.3, "phase": "prefill",
     "source": "ViT-L/14 at 224 px MLP activation (1024 -> 4096), batch 64 x 257 tokens"},
    {"name": "falcon_7b_mlp_decode_tail", "dims": {"M": 13, "N": 18176}, "weight": 0.3, "phase": "decode",
     "source": "Falcon-7B MLP activation (18176, not a power of two), batch 13 decode (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# One rounding of an fp32 result on each side: at most one ulp apart (fp16 2^-10, bf16 2^-7
# relative). atol absorbs the fp32 cancellation in 1 + erf(z) for negative x (~1e-7 * |x|).
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.gelu", "torch.nn.GELU", "torch._C._nn.gelu", "torch.erf", "torch.special.erf",
             "torch.erfc", "torch.special.erfc", "torch.special.ndtr")


def gelu_erf(x: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    return (0.5 * xf * (1.0 + torch.erf(xf * 0.7071067811865476))).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["M"], dims["N"]), dtype, gen, std=1.5)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # scale, erf (counted as one), +1, *x, *0.5: about 5 per element
    return 5.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
