"""KL divergence between teacher and student token distributions given as log-probabilities (distillation)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "kl_div_logprobs"
CATEGORY = "loss"
DESCRIPTION = """
Forward KL(teacher || student) over the vocabulary, both given as log-probabilities
(F.kl_div(student_logp, teacher_logp, log_target=True, reduction="batchmean")):
    out = (1 / M) * sum_{i, j} exp(t[i, j]) * (t[i, j] - s[i, j])
s[M, V] are the student's log-probabilities, t[M, V] the teacher's; every row of each is a
normalised log-softmax (finite values). Returns a 0-d fp32 tensor whatever the inputs' dtype;
work in fp32. In "outlier" mode the logits behind t and s carry rare 10-1000x values, so some rows
are nearly one-hot: their other log-probabilities sit near -1000 and exp(t) underflows to 0.
"""
ENTRY_POINT = "kl_div_logprobs"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "llama3_8b_to_1b_distill", "dims": {"M": 1024, "V": 128256}, "weight": 0.5, "phase": "train",
     "source": "Llama-3.1-8B -> Llama-3.2-1B logit distillation (shared vocab 128256), 1024-token chunk"},
    {"name": "llama3_onpolicy_distill_decode", "dims": {"M": 32, "V": 128256}, "weight": 0.2, "phase": "decode",
     "source": "on-policy distillation with Llama-3 vocab (128256): 32 sampled sequences, one step"},
    {"name": "qwen2_7b_distill_tail", "dims": {"M": 1023, "V": 152064}, "weight": 0.3, "phase": "train",
     "source": "Qwen2-7B -> Qwen2-0.5B distillation (vocab 152064), 1023 positions of a 1024-token sequence"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "V": 128}},
    {"name": "tail", "dims": {"M": 7, "V": 1000}},
]
# An fp32 sum of M * V terms of mixed sign; both sides read identical inputs, so only the
# summation order differs (~1e-6 relative of the sum of |terms|). The KL is O(1) per row here.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-4},
    "fp16": {"atol": 1e-5, "rtol": 1e-4},
    "bf16": {"atol": 1e-5, "rtol": 1e-4},
}
FORBIDDEN = ("torch.nn.functional.kl_div", "torch.nn.KLDivLoss", "torch.kl_div", "torch.xlogy",
             "torch.special.xlogy", "torch.special.entr", "torch.nn.functional.cross_entropy",
             "torch.nn.functional.log_softmax", "torch.nn.functional.softmax", "torch.sum", "torch.mean")


def kl_div_logprobs(student_logp: torch.Tensor, teacher_logp: torch.Tensor) -> torch.Tensor:
    s = student_logp.float()
    t = teacher_logp.float()
    return (torch.exp(t) * (t - s)).sum() / s.shape[0]


def _log_probs(shape, dtype, mode, gen, std):
    logits = maybe_outliers(randn(shape, torch.float32, gen, std=std), mode, gen)
    return torch.log_softmax(logits, dim=-1).to(dtype)


def make_inputs(dims, dtype, mode, gen):
    shape = (dims["M"], dims["V"])
    student = _log_probs(shape, dtype, mode, gen, std=2.0)
    teacher = _log_probs(shape, dtype, mode, gen, std=2.5)
    return (student, teacher)


def flops(dims, dtype):
    # exp, subtract, multiply, add
    return 4.0 * dims["M"] * dims["V"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["V"] * elem_size(dtype) + 4.0
