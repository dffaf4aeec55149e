"""Reverse (suffix) cumulative sum along the last dimension: reward-to-go in RL fine-tuning, the backward of cumsum."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "reverse_cumsum"
CATEGORY = "scan"
DESCRIPTION = """
Suffix sum along the last dimension of x[M, N] (flip, cumsum, flip):
    y[i, j] = sum_{k >= j} x[i, k]
Output has x's shape and dtype. Accumulate in fp32 across the whole row (the carry between
chunks included) and round each output once. Inputs are scaled by 1/sqrt(N) so that suffix sums
stay O(1); "outlier" mode adds rare values 10-1000x a typical element, which shift every EARLIER
suffix sum of their row.
"""
ENTRY_POINT = "reverse_cumsum"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "grpo_rollouts_reward_to_go", "dims": {"M": 512, "N": 4096}, "weight": 0.4, "phase": "train",
     "source": "RL fine-tuning (REINFORCE / GRPO) per-token reward-to-go: 512 rollouts x 4096 tokens"},
    {"name": "mamba2_2p7b_chunk_cumsum_bwd", "dims": {"M": 40960, "N": 256}, "weight": 0.4, "phase": "train",
     "source": "Mamba-2-2.7B backward of the in-chunk dA cumsum: 16 sequences x 80 heads x 32 chunks of 256"},
    {"name": "ppo_rollouts_tail", "dims": {"M": 13, "N": 1023}, "weight": 0.2, "phase": "decode",
     "source": "PPO reward-to-go for 13 rollouts of 1023 response tokens (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# Suffix sums are O(1). fp32: a chunked scan and a sequential one round differently, by up to
# ~sqrt(N) * 6e-8. fp16/bf16: one rounding of the fp32 sum per output, one ulp apart at most.
# "terms": where sums of outlier-sized terms cancel, the output is small but carries their
# rounding; fp32 orders differ by about sqrt(N) * eps32 * sum |x| (2^-16 up to N = 65536, and
# below 2^-15 at the vocab sizes), as in segmented_cumsum. error_terms: the same sums of |x|.
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4, "terms": 2**-16},
    "fp16": {"atol": 1e-3, "rtol": 2e-3, "terms": 2**-16},
    "bf16": {"atol": 8e-3, "rtol": 1.6e-2, "terms": 2**-16},
}
FORBIDDEN = ("torch.cumsum", "torch.Tensor.cumsum", "torch.flip", "torch.fliplr", "torch.Tensor.flip",
             "torch.cumulative_trapezoid", "torch.logcumsumexp", "torch.sum")


def reverse_cumsum(x: torch.Tensor) -> torch.Tensor:
    return torch.flip(torch.cumsum(torch.flip(x.float(), dims=(-1,)), dim=-1), dims=(-1,)).to(x.dtype)


def error_terms(x):
    """The same sums over |x| per output element (see TOLERANCE)."""
    return reverse_cumsum(x.float().abs())


def make_inputs(dims, dtype, mode, gen):
    M, N = dims["M"], dims["N"]
    # outliers are drawn on the unit-scale values, so they stay 10-1000x a typical element
    x = maybe_outliers(randn((M, N), torch.float32, gen), mode, gen) * N ** -0.5
    return (x.to(dtype),)


def flops(dims, dtype):
    # one add per element
    return 1.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
