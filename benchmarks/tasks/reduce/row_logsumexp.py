"""Row log-sum-exp over vocabulary logits: the normaliser of log-probabilities (logprob reporting, sampling)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "row_logsumexp"
CATEGORY = "reduce"
DESCRIPTION = """
Log-sum-exp of each row of x[M, N]:
    lse[i] = log(sum_j exp(x[i, j])) = m_i + log(sum_j exp(x[i, j] - m_i)),   m_i = max_j x[i, j]
Returns an fp32 tensor of shape [M] whatever x's dtype; work in fp32. In "outlier" mode rare
logits reach 1000x: exp without the max-subtraction overflows to inf.
"""
ENTRY_POINT = "row_logsumexp"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "llama3_8b_logprobs_decode", "dims": {"M": 256, "N": 128256}, "weight": 0.4, "phase": "decode",
     "source": "Llama-3-8B logits (vocab 128256), batch-256 decode with logprobs"},
    {"name": "llama3_8b_prompt_logprobs_prefill", "dims": {"M": 2048, "N": 128256}, "weight": 0.4,
     "phase": "prefill", "source": "Llama-3-8B prompt logprobs over a 2048-token prefill"},
    {"name": "qwen2_7b_logprobs_decode_tail", "dims": {"M": 13, "N": 152064}, "weight": 0.2, "phase": "decode",
     "source": "Qwen2-7B logits (vocab 152064), batch 13 (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# lse is ~12 here; fp32 sums of 128k exponentials in different orders agree to ~1e-6 relative.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-5, "rtol": 1e-5},
    "bf16": {"atol": 1e-5, "rtol": 1e-5},
}
FORBIDDEN = ("torch.logsumexp", "torch.special.logsumexp", "torch.log_softmax", "torch.softmax",
             "torch.nn.functional.log_softmax", "torch.nn.functional.softmax", "torch.logcumsumexp")


def row_logsumexp(x: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    m = xf.amax(dim=-1, keepdim=True)
    return (torch.log(torch.exp(xf - m).sum(dim=-1)) + m.squeeze(-1))


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["M"], dims["N"]), dtype, gen, std=2.0)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # max, subtract, exp, add per element
    return 4.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return dims["M"] * dims["N"] * elem_size(dtype) + dims["M"] * 4.0
