"""Logit soft-capping, cap * tanh(x / cap): Gemma-2's final-logit (and attention-score) capping."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "logit_softcap"
CATEGORY = "math"
DESCRIPTION = """
Elementwise soft-capping of a 2-D tensor of logits x[M, N] with cap = 30 (Gemma-2's
final_logit_softcapping):
    y = 30 * tanh(x / 30)
Output has x's shape and dtype. Compute in fp32 and round once. Near zero y ~ x, so a tanh built
as (1 - e) / (1 + e) from e = exp(-2|z|) loses relative precision there; the fp32 tolerance
allows that (absolute error ~ 30 * 1e-7). "outlier" mode scales rare logits by 10-1000x: y must
saturate to +-30, never NaN.
"""
ENTRY_POINT = "logit_softcap"
DTYPES = ("fp32", "fp16", "bf16")
CAP = 30.0
SHAPES = [
    {"name": "gemma2_9b_logits_train", "dims": {"M": 1024, "N": 256000}, "weight": 0.4, "phase": "prefill",
     "source": "Gemma-2-9B final logits (vocab 256000, final_logit_softcapping 30), 1024-token training chunk"},
    {"name": "gemma2_9b_logits_decode", "dims": {"M": 32, "N": 256000}, "weight": 0.4, "phase": "decode",
     "source": "Gemma-2-9B final logits, batch-32 decode sampling"},
    {"name": "gemma2_9b_logits_decode_tail", "dims": {"M": 13, "N": 256000}, "weight": 0.2, "phase": "decode",
     "source": "Gemma-2-9B final logits, batch 13 decode (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# fp32: tanh implementations differ by a few ulps (|y| <= 30: ~1e-6 absolute), and an exp-based
# tanh loses relative accuracy near 0 (~30 * 6e-8 absolute); atol covers both. fp16/bf16: one
# rounding of the fp32 result on each side, one ulp apart at most.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.tanh", "torch.nn.functional.tanh", "torch.nn.Tanh", "torch.nn.functional.hardtanh",
             "torch.sigmoid", "torch.nn.functional.sigmoid")


def logit_softcap(x: torch.Tensor) -> torch.Tensor:
    return (CAP * torch.tanh(x.float() / CAP)).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    # logits of a few tens: the tanh is well inside its non-linear range
    x = randn((dims["M"], dims["N"]), dtype, gen, std=12.0)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # divide, tanh (counted as 3: exp, add, divide), multiply
    return 5.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
