"""Cross-entropy over vocabulary logits with int64 targets: the LM training loss."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, rand, randint, randn

NAME = "cross_entropy"
CATEGORY = "loss"
DESCRIPTION = """
Mean cross-entropy of logits x[M, V] against int64 targets t[M]:
    lse[i]  = log(sum_j exp(x[i, j]))                  (numerically stable: subtract the row max)
    loss[i] = lse[i] - x[i, t[i]]
    out     = sum_{i : t[i] != -100} loss[i] / #{i : t[i] != -100}
Targets equal to -100 (ignore_index, i.e. padding) are left out of both the sum and the count;
every other target is in [0, V). Returns a 0-d fp32 tensor whatever the logits' dtype; work in
fp32. In "outlier" mode rare logits reach 1000x, so exp without the max-subtraction overflows.
"""
ENTRY_POINT = "cross_entropy"
DTYPES = ("fp32", "fp16", "bf16")
IGNORE_INDEX = -100
SHAPES = [
    {
        "name": "llama3_8b_train",
        "dims": {"M": 2048, "V": 128256},
        "weight": 0.5,
        "phase": "prefill",
        "source": "Llama-3-8B LM loss (vocab 128256) over one 2048-token training sequence",
    },
    {
        "name": "qwen2_7b_train_tail",
        "dims": {"M": 1023, "V": 152064},
        "weight": 0.3,
        "phase": "prefill",
        "source": "Qwen2-7B LM loss (vocab 152064), 1023 shifted targets of a 1024-token sequence (tail size)",
    },
    {
        "name": "llama3_8b_rollout_decode",
        "dims": {"M": 32, "V": 128256},
        "weight": 0.2,
        "phase": "decode",
        "source": "Llama-3-8B per-step loss of 32 sequences during decode (RL rollout scoring)",
    },
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "V": 128}},
    {"name": "tail", "dims": {"M": 7, "V": 1000}},
]
# The loss is an fp32 mean of fp32 log-sum-exps: only reduction order differs (~1e-6 relative
# over 128k terms), whatever the logits' dtype, since both sides read the same logits exactly.
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4},
    "fp16": {"atol": 1e-4, "rtol": 1e-4},
    "bf16": {"atol": 1e-4, "rtol": 1e-4},
}
FORBIDDEN = (
    "torch.nn.functional.cross_entropy",
    "torch.nn.functional.nll_loss",
    "torch.nn.functional.log_softmax",
    "torch.log_softmax",
    "torch.logsumexp",
    "torch.special.logsumexp",
    "torch.nn.CrossEntropyLoss",
    "torch.nn.NLLLoss",
)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    x = logits.float()
    valid = targets != IGNORE_INDEX
    safe = torch.where(valid, targets, torch.zeros_like(targets))
    row_max = x.amax(dim=-1, keepdim=True)
    lse = torch.log(torch.exp(x - row_max).sum(dim=-1)) + row_max.squeeze(-1)
    picked = x.gather(1, safe[:, None]).squeeze(1)
    loss = torch.where(valid, lse - picked, torch.zeros_like(lse))
    return loss.sum() / valid.sum().float()


def make_inputs(dims, dtype, mode, gen):
    M, V = dims["M"], dims["V"]
    logits = maybe_outliers(randn((M, V), dtype, gen, std=2.0), mode, gen)
    targets = randint((M,), 0, V, gen)
    # about 5% padding positions, never all of them
    pad = rand((M,), torch.float32, gen) < 0.05
    pad[0] = False
    targets = torch.where(pad, torch.full_like(targets, IGNORE_INDEX), targets)
    return (logits, targets)


def flops(dims, dtype):
    # max, subtract, exp, sum per logit; log, subtract, accumulate per row
    return 4.0 * dims["M"] * dims["V"] + 3.0 * dims["M"]


def min_bytes(dims, dtype):
    return dims["M"] * dims["V"] * elem_size(dtype) + dims["M"] * 8.0 + 4.0
