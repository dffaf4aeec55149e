"""Negative log-likelihood of target tokens from log-probabilities, with ignore_index = -100 (padding)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, rand, randint, randn

NAME = "nll_loss"
CATEGORY = "loss"
DESCRIPTION = """
Mean negative log-likelihood of int64 targets t[M] under log-probabilities logp[M, V]
(F.nll_loss with ignore_index=-100, reduction="mean"):
    out = -(sum_{i : t[i] != -100} logp[i, t[i]]) / #{i : t[i] != -100}
Targets equal to -100 (padding) are left out of both the sum and the count; every other target
is in [0, V); at least one target is valid. Returns a 0-d fp32 tensor whatever logp's dtype; add
in fp32. Only one element per row is needed: the op reads M elements of logp, not M * V (a
kernel that streams whole rows wastes all but 1/V of its traffic). "outlier" mode: the logits
behind logp carry rare 10-1000x values (log-probabilities down to about -2000).
"""
ENTRY_POINT = "nll_loss"
DTYPES = ("fp32", "fp16", "bf16")
SPARSE_READS = True
IGNORE_INDEX = -100
SHAPES = [
    {"name": "llama3_8b_train", "dims": {"M": 2048, "V": 128256}, "weight": 0.4, "phase": "train",
     "source": "Llama-3-8B LM loss from log-probabilities (vocab 128256), 2048-token training sequence"},
    {"name": "qwen2_7b_train_tail", "dims": {"M": 1023, "V": 152064}, "weight": 0.3, "phase": "train",
     "source": "Qwen2-7B LM loss (vocab 152064), 1023 shifted targets of a 1024-token sequence (tail size)"},
    {"name": "llama3_8b_rollout_decode", "dims": {"M": 32, "V": 128256}, "weight": 0.3, "phase": "decode",
     "source": "Llama-3-8B per-step NLL of 32 sampled sequences (RL rollout scoring)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "V": 128}},
    {"name": "tail", "dims": {"M": 37, "V": 1000}},
]
# Both sides add the same fp32 values; only the order of at most M terms differs.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-5, "rtol": 1e-5},
    "bf16": {"atol": 1e-5, "rtol": 1e-5},
}
FORBIDDEN = ("torch.nn.functional.nll_loss", "torch.nn.NLLLoss", "torch.nn.functional.cross_entropy",
             "torch.nn.CrossEntropyLoss", "torch.gather", "torch.take_along_dim", "torch.index_select",
             "torch.sum", "torch.mean")


def nll_loss(logp: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    valid = targets != IGNORE_INDEX
    safe = torch.where(valid, targets, torch.zeros_like(targets))
    picked = logp.gather(1, safe[:, None]).squeeze(1).float()
    total = torch.where(valid, picked, torch.zeros_like(picked)).sum()
    return -total / valid.sum().float()


def make_inputs(dims, dtype, mode, gen):
    M, V = dims["M"], dims["V"]
    logits = maybe_outliers(randn((M, V), torch.float32, gen, std=2.0), mode, gen)
    logp = torch.log_softmax(logits, dim=-1).to(dtype)
    targets = randint((M,), 0, V, gen)
    # about 5% padding positions, never all of them
    pad = rand((M,), torch.float32, gen) < 0.05
    pad[0] = False
    targets = torch.where(pad, torch.full_like(targets, IGNORE_INDEX), targets)
    return (logp, targets)


def flops(dims, dtype):
    # one add per row
    return 1.0 * dims["M"]


def min_bytes(dims, dtype):
    # targets, one log-probability per row, and the 4-byte result
    return dims["M"] * (8.0 + elem_size(dtype)) + 4.0
