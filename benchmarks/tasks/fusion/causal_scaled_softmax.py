"""Scale + causal mask + softmax over attention scores (the unfused attention path)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "causal_scaled_softmax"
CATEGORY = "fusion"
DESCRIPTION = """
Attention probabilities from raw scores, as eager attention computes them between the two GEMMs:
scale by 1/sqrt(head_dim), apply the causal mask, softmax over keys. Input s[BH, SQ, SK] (batch x
heads, queries, keys; SK >= SQ). The SQ queries are the LAST SQ positions of the sequence (chunked
prefill, speculative verification), so query i sees keys j <= i + (SK - SQ):
    z[b, i, j] = s[b, i, j] * scale        scale = 1 / sqrt(128) (head_dim 128)
    p[b, i, j] = exp(z[b, i, j] - max_k z[b, i, k]) / sum_k exp(z[b, i, k] - max_k z[b, i, k])
                 over visible k, for visible j;   p[b, i, j] = 0 for j > i + SK - SQ
Output p has s's shape and dtype. Statistics in fp32, one rounding. Masked scores may be anything
and need not be read. "outlier" mode puts rare values up to 1000x in s: the max-subtraction must
keep every row finite, and an outlier in a masked position must not leak into the row.
"""
ENTRY_POINT = "causal_scaled_softmax"
DTYPES = ("fp32", "fp16", "bf16")
SPARSE_READS = True  # the masked (upper-triangle) scores need not be read
SCALE = 128 ** -0.5
SHAPES = [
    {"name": "llama3_8b_prefill_2k", "dims": {"BH": 32, "SQ": 2048, "SK": 2048}, "weight": 0.4, "phase": "prefill",
     "source": "Llama-3-8B eager attention probabilities (32 heads, head_dim 128), one 2048-token prompt"},
    {"name": "llama3_8b_chunked_prefill", "dims": {"BH": 32, "SQ": 512, "SK": 4096}, "weight": 0.25,
     "phase": "prefill",
     "source": "Llama-3-8B chunked prefill: a 512-token chunk at the end of a 4096-token context, 32 heads"},
    {"name": "qwen2_7b_prefill_tail", "dims": {"BH": 28, "SQ": 1000, "SK": 1000}, "weight": 0.15, "phase": "prefill",
     "source": "Qwen2-7B eager attention probabilities (28 heads, head_dim 128), a 1000-token prompt (tail size)"},
    {"name": "llama3_8b_spec_decode", "dims": {"BH": 1024, "SQ": 4, "SK": 4093}, "weight": 0.2, "phase": "decode",
     "source": "Llama-3-8B speculative-decoding verification: batch 32 x 32 heads, 4 draft tokens after a "
               "4089-token context (tail size)"},
]
CPU_SHAPES = [
    {"name": "square", "dims": {"BH": 3, "SQ": 8, "SK": 8}},
    {"name": "tail", "dims": {"BH": 2, "SQ": 5, "SK": 37}},
]
# p is in [0, 1]; both sides reduce in fp32 (different order: ~1e-6 relative) and round once.
# An fp32 score z = s * scale carries a rounding of |z| x 2^-24, which exp turns into a relative
# error of p: with outliers (|z| in the thousands) a probability of a row two outliers share moves by
# ~1e-4 relative whichever way it is computed (an H200 sweep, 2026-12-03: the honest solution 1.65e-4
# off). So fp32 adds terms x 2^-22, with error_terms = p (|z_j| + 2 max_k |z_k|) over visible keys:
# negligible on ordinary rows (|z| ~ 5), the conditioning itself on outlier rows.
TOLERANCE = {
    "fp32": {"atol": 1e-6, "rtol": 1e-4, "terms": 2**-22},
    "fp16": {"atol": 1e-3, "rtol": 1e-2},
    "bf16": {"atol": 4e-3, "rtol": 2e-2},
}
FORBIDDEN = ("torch.softmax", "torch.nn.functional.softmax", "torch.special.softmax", "torch.log_softmax",
             "torch.nn.functional.scaled_dot_product_attention")


def causal_scaled_softmax(s: torch.Tensor) -> torch.Tensor:
    SQ, SK = s.shape[1], s.shape[2]
    if SK < SQ:  # the contract (the queries are the last SQ of SK positions); drawn shapes keep it
        raise ValueError(f"needs SK >= SQ, got SQ={SQ}, SK={SK}")
    i = torch.arange(SQ, device=s.device)[:, None]
    j = torch.arange(SK, device=s.device)[None, :]
    visible = j <= i + (SK - SQ)
    z = torch.where(visible, s.float() * SCALE, float("-inf"))
    z = z - z.amax(dim=-1, keepdim=True)
    e = torch.exp(z)
    return (e / e.sum(dim=-1, keepdim=True)).to(s.dtype)


def error_terms(s):
    """p_j (|z_j| + 2 max_k |z_k|) per output element, visible keys only (see TOLERANCE)."""
    SQ, SK = s.shape[1], s.shape[2]
    i = torch.arange(SQ, device=s.device)[:, None]
    j = torch.arange(SK, device=s.device)[None, :]
    visible = j <= i + (SK - SQ)
    z = torch.where(visible, s.float() * SCALE, 0.0).abs()
    p = causal_scaled_softmax(s.float())
    return p * (z + 2.0 * z.amax(dim=-1, keepdim=True))


def make_inputs(dims, dtype, mode, gen):
    # q.k for unit-variance head vectors of size 128 has std ~sqrt(128); after scaling, std ~1.4
    s = randn((dims["BH"], dims["SQ"], dims["SK"]), dtype, gen, std=16.0)
    return (maybe_outliers(s, mode, gen),)


def _visible(dims) -> float:
    BH, SQ, SK = dims["BH"], dims["SQ"], dims["SK"]
    # query i sees i + SK - SQ + 1 keys
    return float(BH) * (SQ * (SK - SQ) + SQ * (SQ + 1) / 2.0)


def flops(dims, dtype):
    # scale, max, subtract, exp, sum, divide: about 6 per visible score
    return 6.0 * _visible(dims)


def min_bytes(dims, dtype):
    # read the visible scores, write every probability (zeros included)
    return (_visible(dims) + float(dims["BH"] * dims["SQ"] * dims["SK"])) * elem_size(dtype)
