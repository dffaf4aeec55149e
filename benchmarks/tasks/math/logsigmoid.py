"""Log-sigmoid, the log-space forget gate of Gated Linear Attention / GLA-style models and DPO's loss."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "logsigmoid"
CATEGORY = "math"
DESCRIPTION = """
Elementwise log-sigmoid on a 2-D tensor x[M, N], computed stably:
    y = log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))
Output has x's shape and dtype; compute in fp32 and round once. The naive log(1 / (1 + exp(-x)))
overflows for x < -88 and is log(1) = 0 instead of ~ -exp(-x) for large x; "outlier" mode scales
rare values by 10-1000x. For large positive x the result is tiny and absolute error is judged by
atol.
"""
ENTRY_POINT = "logsigmoid"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "gla_1p3b_gate_prefill", "dims": {"M": 16384, "N": 1024}, "weight": 0.5, "phase": "prefill",
     "source": "GLA-1.3B (fla) forget-gate logsigmoid, key dim 1024 (hidden 2048, expand_k 0.5), 8 x 2048 tokens"},
    {"name": "gla_1p3b_gate_decode", "dims": {"M": 32, "N": 1024}, "weight": 0.3, "phase": "decode",
     "source": "GLA-1.3B forget-gate logsigmoid, batch-32 decode"},
    {"name": "gla_1p3b_gate_prefill_tail", "dims": {"M": 1000, "N": 1024}, "weight": 0.2, "phase": "prefill",
     "source": "GLA-1.3B forget-gate logsigmoid, one 1000-token prompt (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# One rounding of an fp32 result on each side: one ulp apart at most (fp16 2^-10, bf16 2^-7
# relative). atol covers log(1 + u) formed without a log1p for tiny u = exp(-|x|) (~1e-7).
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.logsigmoid", "torch.nn.LogSigmoid", "torch.sigmoid",
             "torch.nn.functional.softplus", "torch.nn.Softplus", "torch.logaddexp", "torch.special.log_expit")


def logsigmoid(x: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    return (torch.clamp_max(xf, 0.0) - torch.log1p(torch.exp(-xf.abs()))).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    # gate pre-activations: positive bias (forget gates start near 1), spread of a few units
    x = randn((dims["M"], dims["N"]), dtype, gen, std=3.0, mean=2.0)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # abs, exp, log1p, min, subtract
    return 5.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
