"""Cross-entropy with label smoothing 0.1 (ViT / ResNet ImageNet recipes, HF Trainer label_smoothing_factor)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, rand, randint, randn

NAME = "cross_entropy_label_smoothing"
CATEGORY = "loss"
DESCRIPTION = """
Mean label-smoothed cross-entropy of logits x[M, C] against int64 targets t[M], smoothing
eps = 0.1 (F.cross_entropy(..., label_smoothing=0.1, ignore_index=-100)): the target
distribution is (1 - eps) on t[i] plus eps / C on every class, so
    lse[i]  = log(sum_j exp(x[i, j]))                     (stable: subtract the row max)
    loss[i] = (1 - eps) * (lse[i] - x[i, t[i]]) + eps * (lse[i] - (1 / C) * sum_j x[i, j])
    out     = sum_{i : t[i] != -100} loss[i] / #{i : t[i] != -100}
Targets equal to -100 are left out of both the sum and the count; every other target is in
[0, C). Returns a 0-d fp32 tensor; work in fp32. "outlier" mode puts rare 1000x logits in: exp
without the max-subtraction overflows, and the row mean must still include them.
"""
ENTRY_POINT = "cross_entropy_label_smoothing"
DTYPES = ("fp32", "fp16", "bf16")
IGNORE_INDEX = -100
SMOOTHING = 0.1
BASELINE = "cross_entropy_label_smoothing_baseline"
SHAPES = [
    {"name": "vit_imagenet1k_b4096", "dims": {"M": 4096, "C": 1000}, "weight": 0.3, "phase": "train",
     "source": "ViT-B/16 ImageNet-1k training (1000 classes, not a power of two, label smoothing 0.1), batch 4096"},
    {"name": "vit_imagenet21k_b4096", "dims": {"M": 4096, "C": 21843}, "weight": 0.3, "phase": "train",
     "source": "ViT-L/16 ImageNet-21k pre-training (21843 classes), batch 4096"},
    {"name": "llama3_8b_sft_smoothed", "dims": {"M": 2048, "C": 128256}, "weight": 0.4, "phase": "train",
     "source": "Llama-3-8B SFT with label_smoothing_factor 0.1 (vocab 128256), 2048-token sequence"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "C": 128}},
    {"name": "tail", "dims": {"M": 7, "C": 1000}},
]
# An fp32 mean of fp32 per-row terms, each a sum over C: only the reduction order differs
# (~1e-6 relative over 128k terms), since both sides read the same logits exactly.
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4},
    "fp16": {"atol": 1e-4, "rtol": 1e-4},
    "bf16": {"atol": 1e-4, "rtol": 1e-4},
}
FORBIDDEN = ("torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss",
             "torch.nn.functional.log_softmax", "torch.log_softmax", "torch.logsumexp",
             "torch.special.logsumexp", "torch.nn.CrossEntropyLoss", "torch.nn.NLLLoss",
             "torch.nn.functional.kl_div", "torch.sum", "torch.mean")


def cross_entropy_label_smoothing(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    x = logits.float()
    C = x.shape[1]
    valid = targets != IGNORE_INDEX
    safe = torch.where(valid, targets, torch.zeros_like(targets))
    row_max = x.amax(dim=-1, keepdim=True)
    lse = torch.log(torch.exp(x - row_max).sum(dim=-1)) + row_max.squeeze(-1)
    picked = x.gather(1, safe[:, None]).squeeze(1)
    mean_x = x.sum(dim=-1) / C
    loss = (1.0 - SMOOTHING) * (lse - picked) + SMOOTHING * (lse - mean_x)
    loss = torch.where(valid, loss, torch.zeros_like(loss))
    return loss.sum() / valid.sum().float()


def cross_entropy_label_smoothing_baseline(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The one-call PyTorch version, timed as the eager/compile baseline."""
    return torch.nn.functional.cross_entropy(logits.float(), targets, ignore_index=IGNORE_INDEX,
                                             label_smoothing=SMOOTHING)


def make_inputs(dims, dtype, mode, gen):
    M, C = dims["M"], dims["C"]
    logits = maybe_outliers(randn((M, C), dtype, gen, std=2.0), mode, gen)
    targets = randint((M,), 0, C, gen)
    # about 5% ignored positions (padding / unlabelled), never all of them
    pad = rand((M,), torch.float32, gen) < 0.05
    pad[0] = False
    targets = torch.where(pad, torch.full_like(targets, IGNORE_INDEX), targets)
    return (logits, targets)


def flops(dims, dtype):
    # max, subtract, exp, sum, and the plain sum per logit; a few per row
    M, C = dims["M"], dims["C"]
    return 5.0 * M * C + 6.0 * M


def min_bytes(dims, dtype):
    M, C = dims["M"], dims["C"]
    return M * C * elem_size(dtype) + M * 8.0 + 4.0
