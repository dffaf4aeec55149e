"""One Adam step with L2 weight decay (coupled, torch.optim.Adam semantics -- not AdamW)."""

import math

import torch

from benchmarks.inputs import maybe_outliers, rand, randn

NAME = "adam"
CATEGORY = "optimizer"
DESCRIPTION = """
One step of torch.optim.Adam (NOT AdamW: the weight decay is added to the gradient, so it also
enters the moments) on a flat fp32 parameter p[N] with gradient g[N] and moments m[N] (exp_avg),
v[N] (exp_avg_sq). Fixed hyperparameters: lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8,
weight_decay = 1e-4; this is step t = 10:
    d     = g + weight_decay * p
    m'    = beta1 * m + (1 - beta1) * d
    v'    = beta2 * v + (1 - beta2) * d^2
    denom = sqrt(v') / sqrt(1 - beta2^t) + eps
    p'    = p - (lr / (1 - beta1^t)) * m' / denom
Returns the tuple (p', m', v'), fp32, shape [N]; the inputs are not modified. A decoupled
(AdamW-style) decay leaves the decay out of m' and v' and is rejected. "outlier" mode puts rare 10-1000x spikes
in the gradient and the parameter.
"""
ENTRY_POINT = "adam"
DTYPES = ("fp32",)
LR, BETA1, BETA2, EPS, WEIGHT_DECAY, STEP = 1e-3, 0.9, 0.999, 1e-8, 1e-4, 10
SHAPES = [
    {"name": "llama3_8b_mlp_weight", "dims": {"N": 58720256}, "weight": 0.4, "phase": "train",
     "source": "Llama-3-8B MLP projection weight (14336 x 4096 = 58.7M), Adam training step"},
    {"name": "vit_b16_all_params_flat", "dims": {"N": 86567656}, "weight": 0.4, "phase": "train",
     "source": "ViT-B/16 (ImageNet-1k head) training step over all 86,567,656 parameters flattened"},
    {"name": "falcon_7b_ln_weight_tail", "dims": {"N": 4544}, "weight": 0.2, "phase": "train",
     "source": "Falcon-7B LayerNorm weight (4544, tail size; launch-bound)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"N": 256}},
    {"name": "tail", "dims": {"N": 1000}},
]
# Each output is a sum of a few terms of very different sizes (p ~ 0.02, m ~ 1e-4, v ~ 1e-6,
# the moment updates ~1e-9): an absolute floor anywhere near the small ones hides a moment that
# was never updated (v' = v passed under atol 1e-8 until 2026-12-08:
# tests/hostile/optimizer_stale_second_moment.py). The bound is relative, per output, to the
# sum of its terms' sizes (error_terms): 1e-5 of each (~100 fp32 ulps) leaves room for the
# GPU's approximate sqrt/divide and another operation order.
TOLERANCE = {
    "fp32": {"atol": 1e-30, "rtol": 1e-5, "terms": 1e-5},
}
FORBIDDEN = ("torch.optim", "torch._fused_adam_", "torch._fused_adamw_", "torch._foreach_add_",
             "torch._foreach_mul_", "torch._foreach_addcdiv_", "torch._foreach_lerp_", "torch.addcdiv",
             "torch.addcmul", "torch.lerp")


def adam(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor,
         exp_avg_sq: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    d = grad + WEIGHT_DECAY * param
    m = BETA1 * exp_avg + (1.0 - BETA1) * d
    v = BETA2 * exp_avg_sq + (1.0 - BETA2) * d * d
    denom = torch.sqrt(v) / math.sqrt(1.0 - BETA2**STEP) + EPS
    return param - (LR / (1.0 - BETA1**STEP)) * m / denom, m, v


def error_terms(param, grad, exp_avg, exp_avg_sq):
    """Per output, the sum of the sizes of the terms it is made of (see TOLERANCE)."""
    d = grad + WEIGHT_DECAY * param
    d_terms = grad.abs() + WEIGHT_DECAY * param.abs()
    v = BETA2 * exp_avg_sq + (1.0 - BETA2) * d * d
    m_terms = BETA1 * exp_avg.abs() + (1.0 - BETA1) * d_terms
    v_terms = BETA2 * exp_avg_sq.abs() + (1.0 - BETA2) * d_terms * d_terms
    denom = torch.sqrt(v) / math.sqrt(1.0 - BETA2**STEP) + EPS
    step = (LR / (1.0 - BETA1**STEP)) * m_terms / denom
    return param.abs() + step, m_terms, v_terms


def make_inputs(dims, dtype, mode, gen):
    N = dims["N"]
    param = maybe_outliers(randn((N,), torch.float32, gen), mode, gen) * 0.02
    grad = maybe_outliers(randn((N,), torch.float32, gen), mode, gen) * 1e-3
    exp_avg = randn((N,), torch.float32, gen, std=1e-4)
    exp_avg_sq = rand((N,), torch.float32, gen, low=0.0, high=2e-6)
    return (param, grad, exp_avg, exp_avg_sq)


def flops(dims, dtype):
    # decay (2), first moment (3), second moment (4), denom (3), update (3): 15 per element
    return 15.0 * dims["N"]


def min_bytes(dims, dtype):
    # read p, g, m, v; write p', m', v' (fp32)
    return 7.0 * 4.0 * dims["N"]
