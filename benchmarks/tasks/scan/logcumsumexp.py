"""Stable log-cumsum-exp along the last dimension: running log-normalisers of causal softmax / log-space scans."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "logcumsumexp"
CATEGORY = "scan"
DESCRIPTION = """
Inclusive log-cumulative-sum-exp along the last dimension of x[M, N]:
    y[i, j] = log(sum_{k <= j} exp(x[i, k]))
computed stably, i.e. with the running maximum factored out:
    y[i, j] = m_ij + log(sum_{k <= j} exp(x[i, k] - m_ij)),   m_ij = max_{k <= j} x[i, k]
Output has x's shape and dtype. Work in fp32 across the whole row and round each output once.
"outlier" mode scales rare values by 10-1000x: exp without the running max overflows to inf (and
underflows to log(0) = -inf after a large negative one).
"""
ENTRY_POINT = "logcumsumexp"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "llama3_8b_causal_lse_prefill", "dims": {"M": 256, "N": 4096}, "weight": 0.4, "phase": "prefill",
     "source": "running log-normaliser of a causal softmax over positions, Llama-3-8B geometry: "
               "8 sequences x 32 heads x 4096 positions"},
    {"name": "long_context_lse_prefill", "dims": {"M": 64, "N": 32768}, "weight": 0.3, "phase": "prefill",
     "source": "the same over a 32768-token context: 2 sequences x 32 heads (Llama-3-8B geometry)"},
    {"name": "qwen2_7b_lse_tail", "dims": {"M": 28, "N": 1000}, "weight": 0.3, "phase": "prefill",
     "source": "the same for one 1000-token prompt over Qwen2-7B's 28 heads (tail size)"},
]
# small: the interpreter runs a custom scan combine element by element; 600 > 512 still spans
# two chunks of the reference kernel
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 2, "N": 64}},
    {"name": "tail", "dims": {"M": 2, "N": 600}},
]
# y is the log of a partial sum: fp32 partial sums in different orders differ by ~1e-6 relative,
# i.e. ~1e-6 absolute in y; |y| reaches ~10 (standard) to ~1e4 (outliers), hence rtol.
# fp16/bf16: one rounding of the fp32 value per output.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-3, "rtol": 2e-3},
    "bf16": {"atol": 8e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.logcumsumexp", "torch.special.logcumsumexp", "torch.cumsum", "torch.cummax",
             "torch.logsumexp", "torch.logaddexp", "torch.Tensor.logcumsumexp")


def logcumsumexp(x: torch.Tensor) -> torch.Tensor:
    return torch.logcumsumexp(x.float(), dim=-1).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["M"], dims["N"]), dtype, gen, std=2.0)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # running max, two exps, a multiply-add and a log per element
    return 6.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
