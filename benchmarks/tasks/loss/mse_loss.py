"""Mean squared error over whole tensors: the diffusion training loss (predicted vs true noise / velocity)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "mse_loss"
CATEGORY = "loss"
DESCRIPTION = """
Mean squared error between a prediction x[B, N] and a target y[B, N] (N = the flattened
per-sample latent, C x H x W or C x F x H x W), reduction "mean" over every element:
    out = (1 / (B * N)) * sum_{b, n} (x[b, n] - y[b, n])^2
Returns a 0-d fp32 tensor whatever the inputs' dtype; subtract, square and accumulate in fp32. The sum spans up to 1.7e7 elements: it needs many programs and a
combine step. "outlier" mode puts rare 10-1000x values in both tensors.
"""
ENTRY_POINT = "mse_loss"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "wan21_video_480p_b8", "dims": {"B": 8, "N": 2096640}, "weight": 0.4, "phase": "train",
     "source": "Wan2.1 video diffusion training, 480p x 81 frames: latents 16 x 21 x 60 x 104, batch 8"},
    {"name": "flux_1024px_b32", "dims": {"B": 32, "N": 262144}, "weight": 0.4, "phase": "train",
     "source": "FLUX.1 / SD3 training at 1024 px: latents 16 x 128 x 128, batch 32"},
    {"name": "sd15_512px_b13_tail", "dims": {"B": 13, "N": 16384}, "weight": 0.2, "phase": "train",
     "source": "SD 1.5 training at 512 px: latents 4 x 64 x 64, batch 13 (tail; launch-bound)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "N": 256}},
    {"name": "tail", "dims": {"B": 3, "N": 3001}},
]
# Both sides read the same values and square them in fp32 (the difference of two fp16/bf16 values
# is exact in fp32): only the order of an fp32 sum of positive terms differs, ~1e-6 relative when
# it is hierarchical. A single sequential fp32 accumulator over 1.7e7 terms drifts further.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 1e-5},
    "fp16": {"atol": 0.0, "rtol": 1e-5},
    "bf16": {"atol": 0.0, "rtol": 1e-5},
}
FORBIDDEN = ("torch.nn.functional.mse_loss", "torch.nn.MSELoss", "torch.nn.functional.l1_loss",
             "torch.nn.functional.smooth_l1_loss", "torch.nn.functional.huber_loss", "torch.sum", "torch.mean",
             "torch.norm", "torch.linalg", "torch.dist", "torch.square", "torch.pow")


def mse_loss(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    d = x.float() - y.float()
    return (d * d).mean()


def make_inputs(dims, dtype, mode, gen):
    shape = (dims["B"], dims["N"])
    target = maybe_outliers(randn(shape, dtype, gen), mode, gen)
    # a prediction that is right up to an error of about half the target's spread
    pred = target.float() + randn(shape, torch.float32, gen, std=0.5)
    return (maybe_outliers(pred.to(dtype), mode, gen), target)


def flops(dims, dtype):
    # subtract, square, add
    return 3.0 * dims["B"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["B"] * dims["N"] * elem_size(dtype) + 4.0
