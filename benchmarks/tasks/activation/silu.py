"""SiLU (swish), the gate activation of Llama/Qwen/Mixtral MLPs and of Mamba's conv branch."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "silu"
CATEGORY = "activation"
DESCRIPTION = """
Elementwise SiLU on a 2-D tensor x[M, N]:
    y = x * sigmoid(x) = x / (1 + exp(-x))
Output has x's shape and dtype. Compute in fp32 and round once to the output dtype. Inputs in
"outlier" mode reach magnitudes of a few thousand: exp(|x|) overflows fp32 there, so the
sigmoid must be formed so that it saturates to 0 or 1 instead of producing inf/inf = NaN.
"""
ENTRY_POINT = "silu"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {
        "name": "llama3_8b_gate_prefill",
        "dims": {"M": 8192, "N": 14336},
        "weight": 0.4,
        "phase": "prefill",
        "source": "Llama-3-8B MLP gate projection output (intermediate 14336), 8192-token prefill, unfused SiLU",
    },
    {
        "name": "llama3_70b_gate_decode",
        "dims": {"M": 32, "N": 28672},
        "weight": 0.3,
        "phase": "decode",
        "source": "Llama-3-70B MLP gate projection output (intermediate 28672), batch-32 decode",
    },
    {
        "name": "qwen2_7b_gate_decode_tail",
        "dims": {"M": 13, "N": 18944},
        "weight": 0.3,
        "phase": "decode",
        "source": "Qwen2-7B MLP gate projection output (intermediate 18944), batch 13 decode (tail size)",
    },
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# One rounding of an fp32 result on each side: at most one ulp apart (fp16 2^-10, bf16 2^-7
# relative), plus fp32 noise from exp/divide that atol absorbs near zero.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = (
    "torch.nn.functional.silu",
    "torch.nn.SiLU",
    "torch.sigmoid",
    "torch.nn.functional.sigmoid",
)


def silu(x: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    return (xf / (1.0 + torch.exp(-xf))).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["M"], dims["N"]), dtype, gen, std=2.0)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # negate, exp, add, divide: 4 per element
    return 4.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
