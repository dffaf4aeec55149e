"""Final-logit soft-capping + softmax: Gemma-2's sampling probabilities over a 256k vocabulary."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "gemma2_softcap_softmax"
CATEGORY = "fusion"
DESCRIPTION = """
Gemma-2 caps its LM-head logits with a scaled tanh before sampling ("final_logit_softcapping":
30.0); the sampler then takes a softmax in fp32. For logits x[M, V] in the task dtype:
    c[i, j] = 30 * tanh(x[i, j] / 30)
    p[i, j] = exp(c[i, j] - max_k c[i, k]) / sum_k exp(c[i, k] - max_k c[i, k])
Output p is [M, V] in fp32 (the sampler's precision) whatever the input dtype; all math in fp32.
Because |c| < 30, every p is at least exp(-60) / V (a normal fp32 number): the capping, not just
the max-subtraction, is what the outlier mode tests -- logits of 1000x are capped to ~30, so they
do not take the whole probability mass as they would uncapped.
"""
ENTRY_POINT = "gemma2_softcap_softmax"
DTYPES = ("fp32", "fp16", "bf16")
CAP = 30.0
SHAPES = [
    {"name": "gemma2_9b_decode", "dims": {"M": 32, "V": 256000}, "weight": 0.4, "phase": "decode",
     "source": "Gemma-2-9B sampling (vocab 256000, final_logit_softcapping 30), batch-32 decode"},
    {"name": "gemma2_9b_decode_b256", "dims": {"M": 256, "V": 256000}, "weight": 0.25, "phase": "decode",
     "source": "Gemma-2-9B sampling, batch-256 decode (bandwidth-bound: 65M logits)"},
    {"name": "gemma2_27b_decode_tail", "dims": {"M": 13, "V": 256000}, "weight": 0.2, "phase": "decode",
     "source": "Gemma-2-27B sampling (vocab 256000), batch 13 decode (tail size)"},
    {"name": "gemma2_2b_prompt_logprobs", "dims": {"M": 1024, "V": 256000}, "weight": 0.15, "phase": "prefill",
     "source": "Gemma-2-2B prompt scoring: probabilities for every position of a 1024-token prompt"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "V": 128}},
    {"name": "tail", "dims": {"M": 3, "V": 1000}},
]
# fp32 output for every input dtype. Errors come from tanh/exp in fp32 (a few ulp in c, i.e.
# ~1e-6 absolute, which is ~1e-6 relative in p) and the summation order; p >= 3.6e-32 is never
# subnormal, so a tiny atol suffices and the check stays relative on the smallest probabilities.
TOLERANCE = {
    "fp32": {"atol": 1e-9, "rtol": 1e-4},
    "fp16": {"atol": 1e-9, "rtol": 1e-4},
    "bf16": {"atol": 1e-9, "rtol": 1e-4},
}
FORBIDDEN = ("torch.softmax", "torch.nn.functional.softmax", "torch.special.softmax", "torch.tanh",
             "torch.nn.functional.tanh", "torch.nn.functional.hardtanh")


def gemma2_softcap_softmax(x: torch.Tensor) -> torch.Tensor:
    c = CAP * torch.tanh(x.float() / CAP)
    c = c - c.amax(dim=-1, keepdim=True)
    e = torch.exp(c)
    return e / e.sum(dim=-1, keepdim=True)


def make_inputs(dims, dtype, mode, gen):
    # LM-head logits spread over roughly +-20 around a per-row offset
    x = randn((dims["M"], dims["V"]), torch.float32, gen, std=6.0) + randn((dims["M"], 1), torch.float32, gen, std=3.0)
    return (maybe_outliers(x.to(dtype), mode, gen),)


def flops(dims, dtype):
    # divide, tanh, scale, max, subtract, exp, sum, divide: about 8 per element
    return 8.0 * dims["M"] * dims["V"]


def min_bytes(dims, dtype):
    # read logits in the dtype, write fp32 probabilities
    return dims["M"] * dims["V"] * (elem_size(dtype) + 4.0)
