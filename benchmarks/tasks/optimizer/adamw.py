"""One AdamW step on fp32 parameters (decoupled weight decay, bias-corrected moments)."""

import math

import torch

from benchmarks.inputs import maybe_outliers, randn

NAME = "adamw"
CATEGORY = "optimizer"
DESCRIPTION = """
One AdamW step (torch.optim.AdamW semantics) on a flat fp32 parameter p[N] with gradient g[N]
and moments m[N] (exp_avg), v[N] (exp_avg_sq). Hyperparameters are fixed: lr = 1e-3,
beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 1e-2, and this is step t = 10:
    p1    = p * (1 - lr * weight_decay)                      (decoupled decay, not L2 on g)
    m'    = beta1 * m + (1 - beta1) * g
    v'    = beta2 * v + (1 - beta2) * g^2
    denom = sqrt(v') / sqrt(1 - beta2^t) + eps
    p'    = p1 - (lr / (1 - beta1^t)) * m' / denom
Returns the tuple (p', m', v'), fp32, shape [N]; the inputs are not modified (no in-place update).
"outlier" mode puts rare 10-1000x spikes in the gradient and the parameter.
"""
ENTRY_POINT = "adamw"
DTYPES = ("fp32",)
LR, BETA1, BETA2, EPS, WEIGHT_DECAY, STEP = 1e-3, 0.9, 0.999, 1e-8, 1e-2, 10
SHAPES = [
    {
        "name": "llama3_8b_mlp_weight",
        "dims": {"N": 58720256},
        "weight": 0.5,
        "phase": "prefill",
        "source": "Llama-3-8B training step, one MLP projection weight (14336 x 4096 = 58.7M parameters)",
    },
    {
        "name": "qwen2_7b_q_proj",
        "dims": {"N": 12845056},
        "weight": 0.3,
        "phase": "prefill",
        "source": "Qwen2-7B training step, attention q_proj weight (3584 x 3584)",
    },
    {
        "name": "falcon_7b_ln_weight_tail",
        "dims": {"N": 4544},
        "weight": 0.2,
        "phase": "prefill",
        "source": "Falcon-7B training step, one LayerNorm weight (4544, tail size; launch-bound)",
    },
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"N": 256}},
    {"name": "tail", "dims": {"N": 1000}},
]
# p ~ 0.02, m ~ 1e-4, v ~ 1e-8, the moment updates far smaller: an absolute floor near the
# small ones hides a moment never updated, so the bound is relative, per output, to the sum of
# its terms' sizes (error_terms; tests/hostile/optimizer_stale_second_moment.py). 1e-5 of each
# (~100 fp32 ulps) leaves room for the GPU's approximate sqrt/divide and another operation order
# -- but not for 1 - beta2 formed in fp32 (0.999 rounds to 0.99900001, so 1 - beta2 is 1.3e-5
# off): form the (1 - beta) factors in double precision on the host.
TOLERANCE = {
    "fp32": {"atol": 1e-30, "rtol": 1e-5, "terms": 1e-5},
}
FORBIDDEN = (
    "torch.optim",
    "torch._fused_adamw_",
    "torch._foreach_add_",
    "torch._foreach_mul_",
    "torch._foreach_addcdiv_",
    "torch._foreach_lerp_",
    "torch.addcdiv",
    "torch.lerp",
)


def adamw(
    param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    p = param * (1.0 - LR * WEIGHT_DECAY)
    m = BETA1 * exp_avg + (1.0 - BETA1) * grad
    v = BETA2 * exp_avg_sq + (1.0 - BETA2) * grad * grad
    denom = torch.sqrt(v) / math.sqrt(1.0 - BETA2**STEP) + EPS
    p = p - (LR / (1.0 - BETA1**STEP)) * m / denom
    return p, m, v


def error_terms(param, grad, exp_avg, exp_avg_sq):
    """Per output, the sum of the sizes of the terms it is made of (see TOLERANCE)."""
    v = BETA2 * exp_avg_sq + (1.0 - BETA2) * grad * grad
    m_terms = BETA1 * exp_avg.abs() + (1.0 - BETA1) * grad.abs()
    v_terms = BETA2 * exp_avg_sq.abs() + (1.0 - BETA2) * grad * grad
    denom = torch.sqrt(v) / math.sqrt(1.0 - BETA2**STEP) + EPS
    step = (LR / (1.0 - BETA1**STEP)) * m_terms / denom
    return param.abs() * (1.0 - LR * WEIGHT_DECAY) + step, m_terms, v_terms


def make_inputs(dims, dtype, mode, gen):
    N = dims["N"]
    # optimizer state consistent with a real run: nine earlier steps of N(0, 1e-3^2) gradients
    # (an independent random v could sit near 0 and make a single update explode)
    exp_avg = torch.zeros((N,), dtype=torch.float32, device=gen.device)
    exp_avg_sq = torch.zeros((N,), dtype=torch.float32, device=gen.device)
    for _ in range(STEP - 1):
        g = randn((N,), torch.float32, gen, std=1e-3)
        exp_avg = BETA1 * exp_avg + (1.0 - BETA1) * g
        exp_avg_sq = BETA2 * exp_avg_sq + (1.0 - BETA2) * g * g
    # this step's parameter and gradient; outliers drawn at unit scale, then scaled
    param = maybe_outliers(randn((N,), torch.float32, gen), mode, gen) * 0.02
    grad = maybe_outliers(randn((N,), torch.float32, gen), mode, gen) * 1e-3
    return (param, grad, exp_avg, exp_avg_sq)


def flops(dims, dtype):
    # decay (2), first moment (3), second moment (4), denom (3), update (3): 15 per element
    return 15.0 * dims["N"]


def min_bytes(dims, dtype):
    # read p, g, m, v; write p', m', v' (fp32)
    return 7.0 * 4.0 * dims["N"]
