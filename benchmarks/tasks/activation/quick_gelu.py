"""QuickGELU, x * sigmoid(1.702 x): the MLP activation of OpenAI CLIP's vision and text towers."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "quick_gelu"
CATEGORY = "activation"
DESCRIPTION = """
Elementwise QuickGELU on a 2-D tensor x[M, N]:
    y = x * sigmoid(1.702 * x) = x / (1 + exp(-1.702 * x))
Output has x's shape and dtype. Compute in fp32 and round once. Inputs in "outlier" mode reach
magnitudes of a few thousand: exp overflows fp32 there, so the sigmoid must saturate to 0 or 1
instead of producing inf/inf = NaN.
"""
ENTRY_POINT = "quick_gelu"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "clip_vit_l14_mlp_b128", "dims": {"M": 32896, "N": 4096}, "weight": 0.5, "phase": "prefill",
     "source": "CLIP ViT-L/14 image tower MLP (1024 -> 4096, quick_gelu), batch 128 x 257 tokens"},
    {"name": "clip_vit_l14_text_mlp_b64", "dims": {"M": 4928, "N": 3072}, "weight": 0.3, "phase": "prefill",
     "source": "CLIP ViT-L/14 text tower MLP (768 -> 3072), batch 64 x 77 tokens"},
    {"name": "clip_text_single_prompt_tail", "dims": {"M": 77, "N": 3072}, "weight": 0.2, "phase": "decode",
     "source": "CLIP ViT-L/14 text tower MLP for one 77-token prompt (Stable Diffusion 1.x conditioning; tail)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# One rounding of an fp32 result on each side: at most one ulp apart (fp16 2^-10, bf16 2^-7
# relative), plus fp32 noise from exp/divide that atol absorbs near zero.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.sigmoid", "torch.nn.functional.sigmoid", "torch.nn.functional.silu", "torch.nn.SiLU",
             "torch.nn.functional.gelu", "torch.special.expit")


def quick_gelu(x: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    return (xf / (1.0 + torch.exp(-1.702 * xf))).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    x = randn((dims["M"], dims["N"]), dtype, gen, std=1.5)
    return (maybe_outliers(x, mode, gen),)


def flops(dims, dtype):
    # scale, exp, add, divide: 4 per element
    return 4.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
