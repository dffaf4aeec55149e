"""SiLU-and-mul: the gated activation of the Llama/Qwen/Mixtral MLP (SwiGLU)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "silu_and_mul"
CATEGORY = "fusion"
DESCRIPTION = """
Gated SiLU on the fused gate/up projection output x[M, 2H] (gate in the first H columns, up in
the last H, as vLLM lays them out):
    out[i, j] = silu(x[i, j]) * x[i, H + j],   silu(g) = g / (1 + exp(-g)),   j < H
Output is [M, H] in x's dtype. Compute in fp32 and round once. "outlier" mode puts rare values of
a few thousand in both halves: the sigmoid must saturate instead of producing NaN.
"""
ENTRY_POINT = "silu_and_mul"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {
        "name": "llama3_8b_prefill",
        "dims": {"M": 8192, "H": 14336},
        "weight": 0.4,
        "phase": "prefill",
        "source": "Llama-3-8B MLP act (intermediate 14336), 8192-token prefill",
    },
    {
        "name": "llama3_8b_decode",
        "dims": {"M": 32, "H": 14336},
        "weight": 0.2,
        "phase": "decode",
        "source": "Llama-3-8B MLP act, batch-32 decode",
    },
    {
        "name": "qwen2_7b_decode_tail",
        "dims": {"M": 13, "H": 18944},
        "weight": 0.2,
        "phase": "decode",
        "source": "Qwen2-7B MLP act (intermediate 18944), batch 13 decode (tail size)",
    },
    {
        "name": "llama3_70b_prefill",
        "dims": {"M": 4096, "H": 28672},
        "weight": 0.2,
        "phase": "prefill",
        "source": "Llama-3-70B MLP act (intermediate 28672), 4096-token prefill",
    },
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "H": 64}},
    {"name": "tail", "dims": {"M": 7, "H": 1000}},
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
    "torch.nn.functional.glu",
)


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
    H = x.shape[-1] // 2
    gate = x[:, :H].float()
    up = x[:, H:].float()
    return (gate / (1.0 + torch.exp(-gate)) * up).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["M"], 2 * dims["H"]), dtype, gen, std=2.0)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # silu (negate, exp, add, divide) and the product: 5 per output element
    return 5.0 * dims["M"] * dims["H"]


def min_bytes(dims, dtype):
    # read [M, 2H], write [M, H]
    return 3.0 * dims["M"] * dims["H"] * elem_size(dtype)
