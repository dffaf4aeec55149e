"""Softplus, as applied to the step size dt in Mamba's selective scan."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "softplus"
CATEGORY = "math"
DESCRIPTION = """
Elementwise softplus on a 2-D tensor x[M, N], computed stably:
    y = log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|))
No threshold shortcut: the exact function, to the output dtype's precision. Output has x's shape
and dtype; compute in fp32 and round once. Inputs in "outlier" mode reach magnitudes of a few
thousand: the naive log(1 + exp(x)) overflows to inf for x > 88 in fp32, the stable form does not.
For very negative x the result is tiny (exp(x)); absolute error there is judged by atol.
"""
ENTRY_POINT = "softplus"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {
        "name": "falcon_mamba_7b_dt_prefill",
        "dims": {"M": 8192, "N": 8192},
        "weight": 0.5,
        "phase": "prefill",
        "source": "Falcon-Mamba-7B dt = softplus(dt_proj(x) + bias), d_inner 8192, 8192-token prefill",
    },
    {
        "name": "falcon_mamba_7b_dt_decode",
        "dims": {"M": 32, "N": 8192},
        "weight": 0.3,
        "phase": "decode",
        "source": "Falcon-Mamba-7B dt softplus, d_inner 8192, batch-32 decode",
    },
    {
        "name": "mamba2_2p7b_dt_prefill_tail",
        "dims": {"M": 8192, "N": 80},
        "weight": 0.2,
        "phase": "prefill",
        "source": "Mamba-2-2.7B per-head dt softplus (80 heads, not a power of two), 8192-token prefill",
    },
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# One rounding of an fp32 result on each side: at most one ulp apart (fp16 2^-10, bf16 2^-7
# relative). atol covers the tiny results of very negative x, where relative error is moot.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = (
    "torch.nn.functional.softplus",
    "torch.nn.Softplus",
    "torch.logaddexp",
    "torch.special.log1p",
)


def softplus(x: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    return (torch.clamp_min(xf, 0.0) + torch.log1p(torch.exp(-xf.abs()))).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    # dt pre-activations: centred a little below zero, spread of a few units
    x = randn((dims["M"], dims["N"]), dtype, gen, std=3.0, mean=-1.0)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # abs, exp, log1p, max, add: about 5 per element
    return 5.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
