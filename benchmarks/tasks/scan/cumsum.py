"""Inclusive prefix sum along the last dimension (top-p sampling, Mamba-2 chunked dA cumsum)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "cumsum"
CATEGORY = "scan"
DESCRIPTION = """
Inclusive cumulative sum along the last dimension of x[M, N]:
    y[i, j] = sum_{k <= j} x[i, k]
Output has x's shape and dtype. Accumulate in fp32 across the whole row (the carry between
chunks included) and round each output once. Inputs are scaled by 1/sqrt(N) so that partial sums
stay O(1), like the normalised probabilities of top-p sampling; "outlier" mode adds rare values
10-1000x a typical element, which shift every later partial sum of their row.
"""
ENTRY_POINT = "cumsum"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {
        "name": "llama3_8b_topp_decode",
        "dims": {"M": 256, "N": 128256},
        "weight": 0.4,
        "phase": "decode",
        "source": "Llama-3-8B top-p sampling: cumsum of sorted probabilities (vocab 128256), batch-256 decode",
    },
    {
        "name": "qwen2_7b_topp_decode_tail",
        "dims": {"M": 13, "N": 152064},
        "weight": 0.2,
        "phase": "decode",
        "source": "Qwen2-7B top-p sampling (vocab 152064), batch 13 (tail size)",
    },
    {
        "name": "mamba2_2p7b_chunk_cumsum_prefill",
        "dims": {"M": 40960, "N": 256},
        "weight": 0.4,
        "phase": "prefill",
        "source": "Mamba-2-2.7B dA cumsum within 256-token chunks: 16 sequences x 80 heads x 32 chunks (8192 tokens)",
    },
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# Partial sums are O(1). fp32: a chunked scan and a sequential one round differently, by up to
# ~sqrt(N) * 6e-8 (2e-5 at N = 128k). fp16/bf16: one rounding of the fp32 sum per output,
# so one ulp (2^-10 / 2^-7 relative) apart at most.
# "terms": where sums of outlier-sized terms cancel, the output is small but carries their
# rounding; fp32 orders differ by about sqrt(N) * eps32 * sum |x| (2^-16 up to N = 65536, and
# below 2^-15 at the vocab sizes), as in segmented_cumsum. error_terms: the same sums of |x|.
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4, "terms": 2**-16},
    "fp16": {"atol": 1e-3, "rtol": 2e-3, "terms": 2**-16},
    "bf16": {"atol": 8e-3, "rtol": 1.6e-2, "terms": 2**-16},
}
FORBIDDEN = (
    "torch.cumsum",
    "torch.Tensor.cumsum",
    "torch.cumulative_trapezoid",
    "torch.cummax",
    "torch.logcumsumexp",
    "torch.special.logcumsumexp",
)


def cumsum(x: torch.Tensor) -> torch.Tensor:
    return torch.cumsum(x.float(), dim=-1).to(x.dtype)


def error_terms(x):
    """The same sums over |x| per output element (see TOLERANCE)."""
    return cumsum(x.float().abs())


def make_inputs(dims, dtype, mode, gen):
    M, N = dims["M"], dims["N"]
    # outliers are drawn on the unit-scale values, so they stay 10-1000x a typical element
    x = maybe_outliers(randn((M, N), torch.float32, gen), mode, gen) * N**-0.5
    return (x.to(dtype),)


def flops(dims, dtype):
    # one add per element
    return 1.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
