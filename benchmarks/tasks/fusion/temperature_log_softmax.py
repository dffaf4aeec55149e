"""Per-request temperature + log-softmax: the sampler's log-probabilities over the vocabulary."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, rand, randn

NAME = "temperature_log_softmax"
CATEGORY = "fusion"
DESCRIPTION = """
Log-probabilities as an LLM sampler computes them (vLLM: logits divided by each request's
temperature, then log_softmax in fp32, for returned logprobs and for sampling). Inputs: logits
x[M, V] in the task dtype, temperature t[M] fp32 (one per request, in [0.25, 1.5]):
    y[i, j]  = x[i, j] / t[i]                                    fp32
    lp[i, j] = y[i, j] - max_k y[i, k] - log(sum_k exp(y[i, k] - max_k y[i, k]))
Output lp is [M, V] in fp32 whatever the input dtype; all math in fp32, and y is the correctly
rounded quotient (IEEE division, as PyTorch divides). "outlier" mode puts rare logits up to 1000x
(|y| up to ~4e4): the log-sum-exp must stay finite (max-subtraction), and log-probs of entries
near such a row max are y - max differences of two ~4e4 numbers, so an approximate division or a
multiply by 1/t (a few ulp of |y|, ~0.01) shows up there; Triton's `/` is approximate on GPU,
tl.div_rn is exact.
"""
ENTRY_POINT = "temperature_log_softmax"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "llama3_8b_decode", "dims": {"M": 32, "V": 128256}, "weight": 0.35, "phase": "decode",
     "source": "Llama-3-8B sampler log-probs (vocab 128256), batch-32 decode"},
    {"name": "deepseek_v3_decode_b256", "dims": {"M": 256, "V": 129280}, "weight": 0.25, "phase": "decode",
     "source": "DeepSeek-V3 sampler log-probs (vocab 129280), batch-256 decode (bandwidth-bound)"},
    {"name": "qwen2_7b_decode_tail", "dims": {"M": 13, "V": 152064}, "weight": 0.2, "phase": "decode",
     "source": "Qwen2-7B sampler log-probs (vocab 152064), batch 13 decode (tail size)"},
    {"name": "llama3_8b_prompt_logprobs", "dims": {"M": 2048, "V": 128256}, "weight": 0.2, "phase": "prefill",
     "source": "Llama-3-8B prompt log-probs for every position of a 2048-token prompt"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "V": 128}},
    {"name": "tail", "dims": {"M": 3, "V": 1000}},
]
# fp32 output for every input dtype. lp is O(10) (O(1e4) with outliers); the division, exp/log
# and summation order move it by a few fp32 ulps: ~1e-5 absolute at |lp| ~ 20, so atol 1e-4
# and rtol 1e-5. Rounding y to bf16 (an error of ~0.05 at |y| ~ 20) fails.
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 1e-5},
    "bf16": {"atol": 1e-4, "rtol": 1e-5},
}
FORBIDDEN = ("torch.log_softmax", "torch.nn.functional.log_softmax", "torch.special.log_softmax",
             "torch.logsumexp", "torch.special.logsumexp", "torch.softmax", "torch.nn.functional.softmax")


def temperature_log_softmax(x: torch.Tensor, temperature: torch.Tensor) -> torch.Tensor:
    y = x.float() / temperature.float()[:, None]
    y = y - y.amax(dim=-1, keepdim=True)
    return y - torch.log(torch.exp(y).sum(dim=-1, keepdim=True))


def make_inputs(dims, dtype, mode, gen):
    M, V = dims["M"], dims["V"]
    x = randn((M, V), torch.float32, gen, std=3.0) + randn((M, 1), torch.float32, gen, std=3.0)
    x = maybe_outliers(x.to(dtype), mode, gen)
    temperature = rand((M,), torch.float32, gen, low=0.25, high=1.5)
    return (x, temperature)


def flops(dims, dtype):
    # divide, max, subtract, exp, sum, log, subtract: about 7 per element
    return 7.0 * dims["M"] * dims["V"]


def min_bytes(dims, dtype):
    # read logits in the dtype and the temperatures, write fp32 log-probs
    return dims["M"] * dims["V"] * (elem_size(dtype) + 4.0) + dims["M"] * 4.0
