"""Squared ReLU, the MLP activation of Primer, Nemotron-4 and the modded-nanoGPT speedrun."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "relu_squared"
CATEGORY = "activation"
DESCRIPTION = """
Elementwise squared ReLU on a 2-D tensor x[M, N]:
    y = max(x, 0)^2
Output has x's shape and dtype. Square in fp32 and round once to the output dtype (squaring in
fp16/bf16 rounds twice). Inputs in "outlier" mode reach magnitudes of a few thousand, whose squares
overflow fp16 (max 65504): the result there is +inf, as the fp32 value rounded to fp16 is.
"""
ENTRY_POINT = "relu_squared"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "nemotron4_15b_mlp_prefill", "dims": {"M": 8192, "N": 24576}, "weight": 0.4, "phase": "prefill",
     "source": "Nemotron-4-15B MLP activation (hidden 6144 -> 24576, squared ReLU), 8192-token prefill"},
    {"name": "nemotron4_15b_mlp_decode", "dims": {"M": 32, "N": 24576}, "weight": 0.3, "phase": "decode",
     "source": "Nemotron-4-15B MLP activation, batch-32 decode"},
    {"name": "nanogpt_124m_mlp_train", "dims": {"M": 12288, "N": 3072}, "weight": 0.3, "phase": "train",
     "source": "GPT-2-small (124M) MLP 768 -> 3072 with squared ReLU as in the modded-nanoGPT speedrun; "
               "12 x 1024-token micro-batch (3072 not a power of two)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# The fp32 square is exact up to one rounding; each side rounds it once to the output dtype.
TOLERANCE = {
    "fp32": {"atol": 1e-6, "rtol": 1e-6},
    "fp16": {"atol": 1e-5, "rtol": 2e-3},
    "bf16": {"atol": 1e-4, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.relu", "torch.nn.ReLU", "torch.relu", "torch.square", "torch.pow",
             "torch.clamp_min", "torch.nn.functional.relu6", "torch.nn.functional.threshold")


def relu_squared(x: torch.Tensor) -> torch.Tensor:
    r = torch.clamp_min(x.float(), 0.0)
    return (r * r).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["M"], dims["N"]), dtype, gen, std=2.0)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # max, multiply
    return 2.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
