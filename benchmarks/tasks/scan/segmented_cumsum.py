"""Segmented cumsum over packed variable-length sequences: Mamba-2's dA cumsum with cu_seqlens."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "segmented_cumsum"
CATEGORY = "scan"
DESCRIPTION = """
Per-sequence inclusive cumulative sum over packed tokens. x[T, H] holds B sequences back to back
(varlen / "packed" layout, one column per head); cu_seqlens[B + 1] (int32, as flash-attention
and mamba_ssm take it) gives their boundaries: 0 = cu[0] < cu[1] < ... < cu[B] = T. For a token
t of sequence b (cu[b] <= t < cu[b + 1]) and every head h:
    y[t, h] = sum_{cu[b] <= s <= t} x[s, h]
The sum restarts at every sequence start. Output has x's shape and dtype; accumulate in fp32 and
round each output once. Sequence lengths vary (1 to several thousand tokens). Values are scaled
by 1/sqrt(mean length) so partial sums are O(1); "outlier" mode adds rare 10-1000x values.
"""
ENTRY_POINT = "segmented_cumsum"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "mamba2_2p7b_varlen_prefill", "dims": {"T": 8192, "H": 80, "B": 16}, "weight": 0.4,
     "phase": "prefill", "source": "Mamba-2-2.7B (80 heads) packed prefill: 16 sequences, 8192 tokens in total"},
    {"name": "codestral_mamba_varlen_prefill", "dims": {"T": 65536, "H": 128, "B": 64}, "weight": 0.4,
     "phase": "train", "source": "Mamba-Codestral-7B (128 heads) packed training batch: 64 sequences, 65536 tokens"},
    {"name": "mamba2_130m_varlen_tail", "dims": {"T": 1000, "H": 24, "B": 5}, "weight": 0.2, "phase": "prefill",
     "source": "Mamba-2-130M (24 heads) packed prefill: 5 prompts, 1000 tokens (tail sizes)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"T": 64, "H": 8, "B": 3}},
    {"name": "tail", "dims": {"T": 333, "H": 5, "B": 4}},
]
# As for cumsum: fp32 chunked and sequential orders differ by ~sqrt(L) * 6e-8 on O(1) sums;
# fp16/bf16: one rounding of the fp32 sum per output.
# "terms": an outlier (10-1000x) makes every later sum of its sequence large, and where a later
# one cancels it the output is small but carries the rounding of the large terms: fp32 orders
# differ by about sqrt(L) * eps32 * sum |x| (2^-16 for L up to 65536). error_terms gives the
# segmented cumsum of |x|. Without it a correct kernel failed on the H100 (2026-12-07, outlier
# mode, T=65536: 10 of 8.4M elements off by up to 4e-4 where the sum had cancelled to ~0.03).
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4, "terms": 2**-16},
    "fp16": {"atol": 1e-3, "rtol": 2e-3, "terms": 2**-16},
    "bf16": {"atol": 8e-3, "rtol": 1.6e-2, "terms": 2**-16},
}
FORBIDDEN = ("torch.cumsum", "torch.Tensor.cumsum", "torch.segment_reduce", "torch.cumulative_trapezoid",
             "torch.logcumsumexp", "torch.sum")


def segmented_cumsum(x: torch.Tensor, cu_seqlens: torch.Tensor) -> torch.Tensor:
    bounds = cu_seqlens.tolist()
    xf = x.float()
    parts = [torch.cumsum(xf[bounds[b]:bounds[b + 1]], dim=0) for b in range(len(bounds) - 1)]
    return torch.cat(parts, dim=0).to(x.dtype)


def error_terms(x, cu_seqlens):
    """sum |x[s, h]| over s from the sequence's start to t, per output element (see TOLERANCE)."""
    return segmented_cumsum(x.float().abs(), cu_seqlens)


def make_inputs(dims, dtype, mode, gen):
    T, H, B = dims["T"], dims["H"], dims["B"]
    # B - 1 distinct cut points in [1, T): sequences of uneven lengths, none empty
    cuts = torch.randperm(T - 1, generator=gen, device=gen.device)[: B - 1] + 1
    cu = torch.cat([torch.zeros(1, dtype=torch.int64, device=gen.device), torch.sort(cuts).values,
                    torch.full((1,), T, dtype=torch.int64, device=gen.device)]).to(torch.int32)
    x = maybe_outliers(randn((T, H), torch.float32, gen), mode, gen) * (T / B) ** -0.5
    return (x.to(dtype), cu)


def flops(dims, dtype):
    # one add per element
    return 1.0 * dims["T"] * dims["H"]


def min_bytes(dims, dtype):
    return 2.0 * dims["T"] * dims["H"] * elem_size(dtype) + (dims["B"] + 1) * 4.0
