"""Cross-entropy plus PaLM's z-loss (1e-4 * log(Z)^2), both from one pass over the logits."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, rand, randint, randn

NAME = "cross_entropy_zloss"
CATEGORY = "loss"
DESCRIPTION = """
The LM loss with PaLM's auxiliary z-loss (also used by OLMo-2 and Chameleon), returned as two
terms. For logits x[M, V] and int64 targets t[M]:
    lse[i] = log(sum_j exp(x[i, j]))                        (stable: subtract the row max)
    ce     = sum_{i valid} (lse[i] - x[i, t[i]]) / n_valid
    z      = 1e-4 * sum_{i valid} lse[i]^2 / n_valid
valid means t[i] != -100 (ignore_index); every other target is in [0, V); n_valid >= 1.
Returns the tuple (ce, z), two 0-d fp32 tensors, whatever the logits' dtype; work in fp32.
Logits carry a per-row offset (|lse| of several units to tens), which z-loss exists to pull
towards 0; "outlier" mode adds rare 1000x logits, so exp without the max-subtraction overflows.
"""
ENTRY_POINT = "cross_entropy_zloss"
DTYPES = ("fp32", "fp16", "bf16")
IGNORE_INDEX = -100
Z_COEF = 1e-4
SHAPES = [
    {"name": "olmo2_7b_train", "dims": {"M": 4096, "V": 100352}, "weight": 0.4, "phase": "train",
     "source": "OLMo-2-7B LM loss with z-loss (vocab 100352), one 4096-token training sequence"},
    {"name": "palm_vocab_256k_train", "dims": {"M": 1024, "V": 256000}, "weight": 0.3, "phase": "train",
     "source": "PaLM-style 256k vocabulary (as in Gemma's 256000) with z-loss 1e-4, 1024-token chunk"},
    {"name": "olmo_1b_train_tail", "dims": {"M": 1023, "V": 50304}, "weight": 0.3, "phase": "train",
     "source": "OLMo-1B LM loss (vocab 50280 padded to 50304), 1023 shifted targets (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "V": 128}},
    {"name": "tail", "dims": {"M": 7, "V": 1000}},
]
# fp32 means of fp32 per-row terms: only the reduction order differs, ~1e-6 relative.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-4},
    "fp16": {"atol": 1e-5, "rtol": 1e-4},
    "bf16": {"atol": 1e-5, "rtol": 1e-4},
}
FORBIDDEN = ("torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss",
             "torch.nn.functional.log_softmax", "torch.log_softmax", "torch.logsumexp",
             "torch.special.logsumexp", "torch.nn.CrossEntropyLoss", "torch.nn.NLLLoss", "torch.sum",
             "torch.mean")


def cross_entropy_zloss(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    x = logits.float()
    valid = targets != IGNORE_INDEX
    safe = torch.where(valid, targets, torch.zeros_like(targets))
    row_max = x.amax(dim=-1, keepdim=True)
    lse = torch.log(torch.exp(x - row_max).sum(dim=-1)) + row_max.squeeze(-1)
    picked = x.gather(1, safe[:, None]).squeeze(1)
    zero = torch.zeros_like(lse)
    n = valid.sum().float()
    ce = torch.where(valid, lse - picked, zero).sum() / n
    z = Z_COEF * torch.where(valid, lse * lse, zero).sum() / n
    return ce, z


def make_inputs(dims, dtype, mode, gen):
    M, V = dims["M"], dims["V"]
    # a per-row offset: un-normalised logits whose log-partition drifts away from 0
    offset = rand((M, 1), torch.float32, gen, low=-8.0, high=8.0)
    logits = maybe_outliers(randn((M, V), torch.float32, gen, std=2.0), mode, gen) + offset
    targets = randint((M,), 0, V, gen)
    pad = rand((M,), torch.float32, gen) < 0.05
    pad[0] = False
    targets = torch.where(pad, torch.full_like(targets, IGNORE_INDEX), targets)
    return (logits.to(dtype), targets)


def flops(dims, dtype):
    # max, subtract, exp, sum per logit; log, square and a few adds per row
    return 4.0 * dims["M"] * dims["V"] + 6.0 * dims["M"]


def min_bytes(dims, dtype):
    return dims["M"] * dims["V"] * elem_size(dtype) + dims["M"] * 8.0 + 8.0
