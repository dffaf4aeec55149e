"""LayerNorm + adaptive scale/shift modulation (adaLN) of diffusion transformers (DiT, SD3, Flux)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "dit_adaln_modulate"
CATEGORY = "fusion"
DESCRIPTION = """
The adaLN block input of a diffusion transformer: an affine-free LayerNorm followed by a per-sample
scale and shift produced from the timestep/class embedding (DiT's modulate(norm1(x), shift, scale)).
Inputs x[B, L, N] (B samples of L tokens), shift[B, N] and scale[B, N], all in the task dtype:
    mean[b, l] = sum_n x[b, l, n] / N,   var[b, l] = sum_n (x[b, l, n] - mean[b, l])^2 / N
    y[b, l, n] = (x[b, l, n] - mean[b, l]) / sqrt(var[b, l] + eps) * (1 + scale[b, n]) + shift[b, n]
eps = 1e-6, no LayerNorm weight or bias. Statistics and the modulation in fp32, one rounding.
Output has x's shape and dtype. Tokens have a nonzero mean; "outlier" mode puts rare values up
to 1000x in x.
"""
ENTRY_POINT = "dit_adaln_modulate"
DTYPES = ("fp32", "fp16", "bf16")
EPS = 1e-6
SHAPES = [
    {"name": "dit_xl2_256px_b64", "dims": {"B": 64, "L": 256, "N": 1152}, "weight": 0.3, "phase": "prefill",
     "source": "DiT-XL/2 adaLN modulate (hidden 1152), 256x256 images (256 tokens), batch 64"},
    {"name": "dit_xl2_512px_b8", "dims": {"B": 8, "L": 1024, "N": 1152}, "weight": 0.2, "phase": "prefill",
     "source": "DiT-XL/2 adaLN modulate (hidden 1152), 512x512 images (1024 tokens), batch 8"},
    {"name": "sd3_medium_1024px_cfg", "dims": {"B": 2, "L": 4096, "N": 1536}, "weight": 0.2, "phase": "prefill",
     "source": "SD3-medium MMDiT image-stream adaLN (hidden 1536), 1024x1024 (4096 tokens), CFG batch 2"},
    {"name": "flux_dev_1024px", "dims": {"B": 1, "L": 4608, "N": 3072}, "weight": 0.3, "phase": "prefill",
     "source": "Flux.1-dev single-stream block pre-norm modulation (hidden 3072), 4096 image + 512 text tokens"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "L": 3, "N": 128}},
    {"name": "tail", "dims": {"B": 3, "L": 2, "N": 1000}},
]
# fp32 statistics in a different order (~1e-6 relative) and one rounding: one ulp apart
# (fp16 2^-10, bf16 2^-7). The modulation multiplies by up to ~3, which atol absorbs near zero.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-4},
    "fp16": {"atol": 1e-3, "rtol": 2e-3},
    "bf16": {"atol": 8e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.layer_norm", "torch.layer_norm", "torch.nn.LayerNorm",
             "torch.native_layer_norm", "torch.var", "torch.var_mean", "torch.std", "torch.std_mean")


def dit_adaln_modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    mean = xf.mean(dim=-1, keepdim=True)
    d = xf - mean
    var = (d * d).mean(dim=-1, keepdim=True)
    y = d * torch.rsqrt(var + EPS) * (1.0 + scale.float()[:, None, :]) + shift.float()[:, None, :]
    return y.to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    B, L, N = dims["B"], dims["L"], dims["N"]
    x = randn((B, L, N), torch.float32, gen, std=2.0) + randn((B, L, 1), torch.float32, gen, std=1.0)
    x = maybe_outliers(x.to(dtype), mode, gen)
    shift = randn((B, N), dtype, gen, std=0.5)
    scale = randn((B, N), dtype, gen, std=0.5)
    return (x, shift, scale)


def flops(dims, dtype):
    # sum, subtract, square, sum, scale by rstd, (1 + scale) multiply, + shift: 8 per element
    return 8.0 * dims["B"] * dims["L"] * dims["N"]


def min_bytes(dims, dtype):
    # read x, shift, scale; write y
    e = elem_size(dtype)
    return 2.0 * dims["B"] * dims["L"] * dims["N"] * e + 2.0 * dims["B"] * dims["N"] * e
