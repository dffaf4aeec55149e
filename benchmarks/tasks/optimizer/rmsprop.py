"""One RMSprop step, torch.optim.RMSprop defaults (no momentum, not centred)."""

import torch

from benchmarks.inputs import maybe_outliers, rand, randn

NAME = "rmsprop"
CATEGORY = "optimizer"
DESCRIPTION = """
One step of torch.optim.RMSprop(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
centered=False) on a flat fp32 parameter p[N] with gradient g[N] and square average v[N]:
    v' = alpha * v + (1 - alpha) * g^2
    p' = p - lr * g / (sqrt(v') + eps)
(eps outside the square root, as PyTorch has it; TensorFlow's RMSprop puts it inside and differs.)
Returns the tuple (p', v'), fp32, shape [N]; the inputs are not modified. "outlier" mode puts
rare 10-1000x spikes in the gradient and the parameter.
"""
ENTRY_POINT = "rmsprop"
DTYPES = ("fp32",)
LR, ALPHA, EPS = 1e-2, 0.99, 1e-8
SHAPES = [
    {"name": "llama3_8b_mlp_weight", "dims": {"N": 58720256}, "weight": 0.4, "phase": "train",
     "source": "Llama-3-8B MLP projection weight (14336 x 4096 = 58.7M), RMSprop step"},
    {"name": "efficientnet_b7_all_params_flat", "dims": {"N": 66347960}, "weight": 0.4, "phase": "train",
     "source": "EfficientNet-B7 (RMSprop recipe) training step over all 66,347,960 parameters flattened"},
    {"name": "falcon_7b_ln_weight_tail", "dims": {"N": 4544}, "weight": 0.2, "phase": "train",
     "source": "Falcon-7B LayerNorm weight (4544, tail size; launch-bound)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"N": 256}},
    {"name": "tail", "dims": {"N": 1000}},
]
# The update lr * g / sqrt(v') is ~1e-2 (up to 0.1 where an outlier gradient dominates v') and
# p' = p - update often cancels to ~1e-4: the GPU's approximate sqrt and divide leave a few ulps
# of the update (~1e-8; measured up to 1.2e-8 on an H200 (torch 2.11, triton 3.6, 2026-11-29)) in
# p'. The bound is relative, per output, to the sum of its terms' sizes (error_terms), 1e-5 of
# each: an absolute floor of 1e-7 hid v' = v (never updated, ~1e-9 off) until 2026-12-08. A wrong
# formula (eps inside the sqrt, alpha swapped) is off by >= 1e-5.
TOLERANCE = {
    "fp32": {"atol": 1e-30, "rtol": 1e-5, "terms": 1e-5},
}
FORBIDDEN = ("torch.optim", "torch._foreach_addcdiv_", "torch._foreach_mul_", "torch._foreach_addcmul_",
             "torch.addcdiv", "torch.addcmul", "torch.lerp")


def rmsprop(param: torch.Tensor, grad: torch.Tensor, square_avg: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    v = ALPHA * square_avg + (1.0 - ALPHA) * grad * grad
    return param - LR * grad / (torch.sqrt(v) + EPS), v


def error_terms(param, grad, square_avg):
    """Per output, the sum of the sizes of the terms it is made of (see TOLERANCE)."""
    v = ALPHA * square_avg + (1.0 - ALPHA) * grad * grad
    v_terms = ALPHA * square_avg.abs() + (1.0 - ALPHA) * grad * grad
    return param.abs() + LR * grad.abs() / (torch.sqrt(v) + EPS), v_terms


def make_inputs(dims, dtype, mode, gen):
    N = dims["N"]
    param = maybe_outliers(randn((N,), torch.float32, gen), mode, gen) * 0.02
    grad = maybe_outliers(randn((N,), torch.float32, gen), mode, gen) * 1e-3
    square_avg = rand((N,), torch.float32, gen, low=0.0, high=2e-6)
    return (param, grad, square_avg)


def flops(dims, dtype):
    # square average (4), sqrt, add, divide, scale, subtract
    return 9.0 * dims["N"]


def min_bytes(dims, dtype):
    # read p, g, v; write p', v' (fp32)
    return 5.0 * 4.0 * dims["N"]
