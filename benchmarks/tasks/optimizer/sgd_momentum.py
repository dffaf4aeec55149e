"""One SGD step with momentum and (coupled) weight decay, torch.optim.SGD semantics: the ResNet recipe."""

import torch

from benchmarks.inputs import maybe_outliers, randn

NAME = "sgd_momentum"
CATEGORY = "optimizer"
DESCRIPTION = """
One step of torch.optim.SGD(lr=0.1, momentum=0.9, dampening=0, weight_decay=1e-4, nesterov=False)
on a flat fp32 parameter p[N] with gradient g[N] and momentum buffer buf[N] (not the first step,
so the buffer exists):
    d    = g + weight_decay * p              (L2 decay folded into the gradient)
    buf' = momentum * buf + d
    p'   = p - lr * buf'
Returns the tuple (p', buf'), fp32, shape [N]; the inputs are not modified (no in-place update).
"outlier" mode puts rare 10-1000x spikes in the gradient and the parameter.
"""
ENTRY_POINT = "sgd_momentum"
DTYPES = ("fp32",)
LR, MOMENTUM, WEIGHT_DECAY = 0.1, 0.9, 1e-4
SHAPES = [
    {"name": "resnet50_all_params_flat", "dims": {"N": 25557032}, "weight": 0.4, "phase": "train",
     "source": "ResNet-50 training step over all 25,557,032 parameters flattened into one buffer (apex-style)"},
    {"name": "llama3_8b_mlp_weight", "dims": {"N": 58720256}, "weight": 0.4, "phase": "train",
     "source": "Llama-3-8B MLP projection weight (14336 x 4096), SGD fine-tuning step"},
    {"name": "resnet50_fc_bias_tail", "dims": {"N": 1000}, "weight": 0.2, "phase": "train",
     "source": "ResNet-50 classifier bias (1000, tail size; launch-bound)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"N": 256}},
    {"name": "tail", "dims": {"N": 1000}},
]
# p ~ 0.02 and the step lr * buf' ~ 1e-3; the bound is relative, per output, to the sum of its
# terms' sizes (error_terms), 1e-6 of each (~10 fp32 ulps): room for fma contraction and another
# association, including where p - lr * buf' cancels, and no absolute floor to hide a term under.
TOLERANCE = {
    "fp32": {"atol": 1e-30, "rtol": 1e-6, "terms": 1e-6},
}
FORBIDDEN = ("torch.optim", "torch._foreach_add_", "torch._foreach_mul_", "torch._foreach_add",
             "torch._fused_sgd_", "torch.addcmul", "torch.lerp", "torch.add", "torch.mul")


def sgd_momentum(param: torch.Tensor, grad: torch.Tensor, momentum_buffer: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    d = grad + WEIGHT_DECAY * param
    buf = MOMENTUM * momentum_buffer + d
    return param - LR * buf, buf


def error_terms(param, grad, momentum_buffer):
    """Per output, the sum of the sizes of the terms it is made of (see TOLERANCE)."""
    buf_terms = MOMENTUM * momentum_buffer.abs() + grad.abs() + WEIGHT_DECAY * param.abs()
    return param.abs() + LR * buf_terms, buf_terms


def make_inputs(dims, dtype, mode, gen):
    N = dims["N"]
    param = maybe_outliers(randn((N,), torch.float32, gen), mode, gen) * 0.02
    grad = maybe_outliers(randn((N,), torch.float32, gen), mode, gen) * 1e-3
    momentum_buffer = randn((N,), torch.float32, gen, std=3e-3)
    return (param, grad, momentum_buffer)


def flops(dims, dtype):
    # decay (2), momentum (2), update (2)
    return 6.0 * dims["N"]


def min_bytes(dims, dtype):
    # read p, g, buf; write p', buf' (fp32)
    return 5.0 * 4.0 * dims["N"]
