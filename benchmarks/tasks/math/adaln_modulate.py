"""AdaLN modulation, x * (1 + scale) + shift with per-sample vectors: every DiT / SD3 / Flux block."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "adaln_modulate"
CATEGORY = "math"
DESCRIPTION = """
Adaptive-LayerNorm modulation (DiT's `modulate`) of tokens x[B, T, D] by per-sample vectors
shift[B, D] and scale[B, D] (the conditioning MLP's outputs), broadcast over the T tokens:
    y[b, t, d] = x[b, t, d] * (1 + scale[b, d]) + shift[b, d]
All three inputs share the dtype; the output is [B, T, D] in it. Compute in fp32 and round once.
"outlier" mode scales rare entries of x and of scale by 10-1000x.
"""
ENTRY_POINT = "adaln_modulate"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "dit_xl2_256px_b256", "dims": {"B": 256, "T": 256, "D": 1152}, "weight": 0.3, "phase": "train",
     "source": "DiT-XL/2 at 256 px (16x16 latent patches = 256 tokens, hidden 1152), batch 256 training"},
    {"name": "sd3_medium_1024px_cfg", "dims": {"B": 2, "T": 4096, "D": 1536}, "weight": 0.3, "phase": "prefill",
     "source": "SD3-medium MMDiT image stream at 1024 px (4096 tokens, hidden 1536), batch 2 (CFG)"},
    {"name": "flux_dev_1024px", "dims": {"B": 1, "T": 4096, "D": 3072}, "weight": 0.2, "phase": "prefill",
     "source": "FLUX.1-dev double-stream block, image tokens at 1024 px (4096 tokens, hidden 3072), batch 1"},
    {"name": "dit_xl2_512px_tail", "dims": {"B": 7, "T": 1024, "D": 1152}, "weight": 0.2, "phase": "prefill",
     "source": "DiT-XL/2 at 512 px (1024 tokens, hidden 1152), batch 7 (tail)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "T": 8, "D": 64}},
    {"name": "tail", "dims": {"B": 3, "T": 7, "D": 200}},
]
# fp32: an fma or a different association of x * (1 + s) + h moves the result by an ulp or two.
# fp16/bf16: one rounding of the fp32 result on each side, one ulp apart at most.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-3, "rtol": 2e-3},
    "bf16": {"atol": 1e-2, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.addcmul", "torch.lerp", "torch.nn.functional.layer_norm")


def adaln_modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    return (xf * (1.0 + scale.float()[:, None, :]) + shift.float()[:, None, :]).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    B, T, D = dims["B"], dims["T"], dims["D"]
    x = maybe_outliers(randn((B, T, D), dtype, gen), mode, gen)  # normalised tokens
    shift = randn((B, D), dtype, gen, std=0.5)
    scale = maybe_outliers(randn((B, D), dtype, gen, std=0.5), mode, gen)
    return (x, shift, scale)


def flops(dims, dtype):
    # 1 + scale, multiply, add per output element
    return 3.0 * dims["B"] * dims["T"] * dims["D"]


def min_bytes(dims, dtype):
    B, T, D = dims["B"], dims["T"], dims["D"]
    return (2.0 * B * T * D + 2.0 * B * D) * elem_size(dtype)
