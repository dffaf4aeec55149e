"""One Lion step (sign of an interpolated momentum, decoupled weight decay), as in lion-pytorch / optax."""

import torch

from benchmarks.inputs import maybe_outliers, randn

NAME = "lion"
CATEGORY = "optimizer"
DESCRIPTION = """
One Lion step (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms") on a flat fp32
parameter p[N] with gradient g[N] and momentum m[N]. Fixed hyperparameters: lr = 1e-4,
beta1 = 0.9, beta2 = 0.99, weight_decay = 0.1:
    c  = beta1 * m + (1 - beta1) * g                  (the update direction's interpolation)
    p' = p * (1 - lr * weight_decay) - lr * sign(c)   (sign(0) = 0)
    m' = beta2 * m + (1 - beta2) * g
Returns the tuple (p', m'), fp32, shape [N]; the inputs are not modified. Note the two different
betas: the update uses beta1, the stored momentum beta2. sign(c) is ill-conditioned where c is
within rounding of 0 (an fma changes it), so the inputs keep |c| >= 1e-3 * (|beta1 m| +
|(1 - beta1) g|). "outlier" mode puts rare 10-1000x spikes in the gradient and the parameter.
"""
ENTRY_POINT = "lion"
DTYPES = ("fp32",)
LR, BETA1, BETA2, WEIGHT_DECAY = 1e-4, 0.9, 0.99, 0.1
SHAPES = [
    {"name": "llama3_8b_mlp_weight", "dims": {"N": 58720256}, "weight": 0.4, "phase": "train",
     "source": "Llama-3-8B MLP projection weight (14336 x 4096 = 58.7M), Lion training step"},
    {"name": "qwen2_7b_q_proj", "dims": {"N": 12845056}, "weight": 0.4, "phase": "train",
     "source": "Qwen2-7B attention q_proj weight (3584 x 3584), Lion training step"},
    {"name": "falcon_7b_ln_weight_tail", "dims": {"N": 4544}, "weight": 0.2, "phase": "train",
     "source": "Falcon-7B LayerNorm weight (4544, tail size; launch-bound)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"N": 256}},
    {"name": "tail", "dims": {"N": 1000}},
]
# p ~ 0.02 moves by exactly lr = 1e-4 per element; the bound is relative, per output, to the sum
# of its terms' sizes (error_terms), 1e-6 of each (~10 fp32 ulps), with no absolute floor to hide
# a term under. A wrong sign anywhere is off by 2e-4 (1e-2 relative): rejected.
TOLERANCE = {
    "fp32": {"atol": 1e-30, "rtol": 1e-6, "terms": 1e-6},
}
FORBIDDEN = ("torch.optim", "torch.sign", "torch.sgn", "torch.Tensor.sign", "torch.Tensor.sign_", "torch.lerp",
             "torch._foreach_lerp_", "torch._foreach_sign", "torch._foreach_mul_", "torch._foreach_add_",
             "torch.addcmul")


def lion(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    c = BETA1 * exp_avg + (1.0 - BETA1) * grad
    p = param * (1.0 - LR * WEIGHT_DECAY) - LR * torch.sign(c)
    m = BETA2 * exp_avg + (1.0 - BETA2) * grad
    return p, m


def error_terms(param, grad, exp_avg):
    """Per output, the sum of the sizes of the terms it is made of (see TOLERANCE)."""
    p_terms = param.abs() * (1.0 - LR * WEIGHT_DECAY) + LR
    m_terms = BETA2 * exp_avg.abs() + (1.0 - BETA2) * grad.abs()
    return p_terms, m_terms


def make_inputs(dims, dtype, mode, gen):
    N = dims["N"]
    param = maybe_outliers(randn((N,), torch.float32, gen), mode, gen) * 0.02
    grad = maybe_outliers(randn((N,), torch.float32, gen), mode, gen) * 1e-3
    exp_avg = randn((N,), torch.float32, gen, std=1e-4)
    # keep the interpolation c clear of 0, where its sign is decided by rounding: nudge g there
    a, b = BETA1 * exp_avg, (1.0 - BETA1) * grad
    near_zero = (a + b).abs() < 1e-3 * (a.abs() + b.abs())
    grad = torch.where(near_zero, grad + 0.02 * torch.where(b >= 0, 1.0, -1.0) * a.abs() / (1.0 - BETA1) + 1e-9,
                       grad)
    return (param, grad, exp_avg)


def flops(dims, dtype):
    # interpolation (3), sign, decay and update (4), momentum (3)
    return 11.0 * dims["N"]


def min_bytes(dims, dtype):
    # read p, g, m; write p', m' (fp32)
    return 5.0 * 4.0 * dims["N"]
