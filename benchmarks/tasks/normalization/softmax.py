"""Row softmax over the last dimension, as in attention probabilities and sampling logits."""

import torch

from benchmarks.inputs import maybe_outliers, randn

NAME = "softmax"
CATEGORY = "normalization"
DESCRIPTION = """
Softmax over the last dimension of a 2-D tensor x[M, N]:
    y[i, j] = exp(x[i, j] - max_k x[i, k]) / sum_k exp(x[i, k] - max_k x[i, k])
Output has x's shape and dtype. Accumulate in fp32. Inputs in "outlier" mode carry rare values of
magnitude up to 1000x, so the max-subtraction is required for a finite result.
"""
ENTRY_POINT = "softmax"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "llama3_8b_logits_decode", "dims": {"M": 32, "N": 128256}, "weight": 0.2, "phase": "decode",
     "source": "Llama-3-8B LM-head logits (vocab 128256), batch 32 decode sampling"},
    {"name": "attn_scores_prefill", "dims": {"M": 32768, "N": 4096}, "weight": 0.5, "phase": "prefill",
     "source": "unfused attention probabilities: 8 heads x 4096 queries, 4096 keys (Llama-3-8B, seq 4096)"},
    {"name": "qwen2_7b_logits_tail", "dims": {"M": 13, "N": 152064}, "weight": 0.3, "phase": "decode",
     "source": "Qwen2-7B logits (vocab 152064), batch 13 (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-4},
    "fp16": {"atol": 1e-3, "rtol": 1e-2},
    "bf16": {"atol": 4e-3, "rtol": 2e-2},
}
FORBIDDEN = ("torch.softmax", "torch.nn.functional.softmax", "torch.special.softmax", "torch.log_softmax")


def softmax(x: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    xf = xf - xf.amax(dim=-1, keepdim=True)
    e = torch.exp(xf)
    return (e / e.sum(dim=-1, keepdim=True)).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["M"], dims["N"]), dtype, gen, std=2.0)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # max, subtract, exp, sum, divide: about 5 per element
    return 5.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * torch.empty((), dtype=dtype).element_size()
