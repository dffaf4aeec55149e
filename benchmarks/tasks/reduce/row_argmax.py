"""Row argmax over vocabulary logits: greedy decoding's token pick."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randint, randn

NAME = "row_argmax"
CATEGORY = "reduce"
DESCRIPTION = """
Index of the maximum of each row of a 2-D tensor x[M, N] (the greedy token of each sequence):
    idx[i] = min { j : x[i, j] == max_k x[i, k] }
Returns an int64 tensor of shape [M]. Ties go to the FIRST (smallest) column index, as
torch.argmax does; bf16/fp16 logits over a 128k vocabulary tie often. Inputs are finite (no NaN).
Mode "ties" draws integer-valued logits in [-8, 8], so every row has dozens of tied maxima.
"""
ENTRY_POINT = "row_argmax"
DTYPES = ("fp32", "fp16", "bf16")
MODES = ("ties",)
SHAPES = [
    {
        "name": "llama3_8b_greedy_decode",
        "dims": {"M": 32, "N": 128256},
        "weight": 0.4,
        "phase": "decode",
        "source": "Llama-3-8B LM-head logits (vocab 128256), batch-32 greedy decode",
    },
    {
        "name": "deepseek_v3_greedy_decode",
        "dims": {"M": 256, "N": 129280},
        "weight": 0.3,
        "phase": "decode",
        "source": "DeepSeek-V3 LM-head logits (vocab 129280), batch-256 greedy decode",
    },
    {
        "name": "qwen2_7b_greedy_decode_tail",
        "dims": {"M": 13, "N": 152064},
        "weight": 0.1,
        "phase": "decode",
        "source": "Qwen2-7B LM-head logits (vocab 152064), batch 13 (tail size)",
    },
    {
        "name": "llama3_8b_all_positions_prefill",
        "dims": {"M": 2048, "N": 128256},
        "weight": 0.2,
        "phase": "prefill",
        "source": "Llama-3-8B logits at every position of a 2048-token prefill (speculative-decoding verification)",
    },
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# Indices are exact: any difference is a wrong answer.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 0.0},
    "fp16": {"atol": 0.0, "rtol": 0.0},
    "bf16": {"atol": 0.0, "rtol": 0.0},
}
FORBIDDEN = (
    "torch.argmax",
    "torch.max",
    "torch.topk",
    "torch.sort",
    "torch.argsort",
    "torch.kthvalue",
)


def row_argmax(x: torch.Tensor) -> torch.Tensor:
    return torch.argmax(x, dim=-1)


def make_inputs(dims, dtype, mode, gen):
    shape = (dims["M"], dims["N"])
    if mode == "ties":
        return (randint(shape, -8, 9, gen).to(dtype),)
    x = randn(shape, dtype, gen, std=2.0)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # one compare per element
    return 1.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return dims["M"] * dims["N"] * elem_size(dtype) + dims["M"] * 8.0
