"""GELU with the tanh approximation, as in the MLPs of Gemma, GPT-2/GPT-J and StarCoder2."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "gelu_tanh"
CATEGORY = "activation"
DESCRIPTION = """
Elementwise GELU, tanh approximation ("gelu_pytorch_tanh" / "gelu_new"), on a 2-D tensor x[M, N]:
    y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
Output has x's shape and dtype. Compute in fp32 and round once to the output dtype. Inputs in
"outlier" mode reach magnitudes of a few thousand, where x^3 is ~1e10 and the tanh saturates:
the result must stay finite (y -> x for large positive x, y -> 0 for large negative x).
"""
ENTRY_POINT = "gelu_tanh"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {
        "name": "gemma2_9b_mlp_prefill",
        "dims": {"M": 8192, "N": 14336},
        "weight": 0.5,
        "phase": "prefill",
        "source": "Gemma-2-9B MLP gate activation (intermediate 14336, gelu_pytorch_tanh), 8192-token prefill",
    },
    {
        "name": "gemma_7b_mlp_decode",
        "dims": {"M": 32, "N": 24576},
        "weight": 0.3,
        "phase": "decode",
        "source": "Gemma-7B MLP gate activation (intermediate 24576), batch-32 decode",
    },
    {
        "name": "gpt2_xl_mlp_decode_tail",
        "dims": {"M": 13, "N": 6400},
        "weight": 0.2,
        "phase": "decode",
        "source": "GPT-2-XL MLP activation (intermediate 6400, gelu_new), batch 13 decode (tail size)",
    },
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# Reference and candidate both round an fp32 result once: they may land one ulp apart
# (fp16: 2^-10 relative, bf16: 2^-7). atol covers the tanh cancellation of 1 + tanh(z) for
# negative x, where the fp32 reference itself is only accurate to ~1e-7 * |x|.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.gelu", "torch.nn.GELU", "torch._C._nn.gelu")


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    inner = 0.7978845608028654 * (xf + 0.044715 * xf * xf * xf)
    return (0.5 * xf * (1.0 + torch.tanh(inner))).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["M"], dims["N"]), dtype, gen, std=1.5)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # x^3 (2), *0.044715, +x, *sqrt(2/pi), tanh, +1, *x, *0.5: about 9 per element
    return 9.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
