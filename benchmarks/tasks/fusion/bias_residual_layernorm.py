"""Bias add + residual add + LayerNorm, fused, as between the sublayers of pre-LN GPT/ViT blocks."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "bias_residual_layernorm"
CATEGORY = "fusion"
DESCRIPTION = """
The epilogue between two sublayers of a pre-LN transformer with biased projections (StarCoder2,
GPT-2, ViT): the output projection's bias and the residual are added, the sum becomes the new
residual stream, and the next LayerNorm (weight and bias) normalises it. Inputs x[M, N] (projection
output without its bias), bias[N], residual[M, N], w[N], b[N], all in the task dtype:
    s[i, j]  = x[i, j] + bias[j] + residual[i, j]      in fp32, summed in this order
    h[i, j]  = s[i, j] rounded to the dtype             (the new residual stream, an output)
    mean[i]  = sum_j s[i, j] / N,    var[i] = sum_j (s[i, j] - mean[i])^2 / N      (from fp32 s)
    out[i,j] = (s[i, j] - mean[i]) / sqrt(var[i] + eps) * w[j] + b[j],   eps = 1e-5, fp32, one rounding
Returns the tuple (out, h), both [M, N] in the dtype; inputs are not modified. The norm reads the
fp32 sum, not the rounded h: the row mean is large, so one ulp of a rounded h would move
s - mean (and out) by far more than an ulp of out. The residual has a nonzero mean per row
(E[s^2] - mean^2 loses digits); "outlier" mode puts rare values up to 1000x in x and the residual.
"""
ENTRY_POINT = "bias_residual_layernorm"
DTYPES = ("fp32", "fp16", "bf16")
EPS = 1e-5
SHAPES = [
    {"name": "starcoder2_15b_prefill", "dims": {"M": 8192, "N": 6144}, "weight": 0.35, "phase": "prefill",
     "source": "StarCoder2-15B attention out-proj bias + residual + LayerNorm (hidden 6144), 8192-token prefill"},
    {"name": "starcoder2_15b_decode", "dims": {"M": 32, "N": 6144}, "weight": 0.25, "phase": "decode",
     "source": "StarCoder2-15B bias + residual + LayerNorm (hidden 6144), batch-32 decode"},
    {"name": "vit_h14_b32", "dims": {"M": 8224, "N": 1280}, "weight": 0.2, "phase": "prefill",
     "source": "ViT-H/14 attention proj bias + residual + LayerNorm (hidden 1280), batch 32 x 257 tokens"},
    {"name": "starcoder2_7b_decode_tail", "dims": {"M": 13, "N": 4608}, "weight": 0.2, "phase": "decode",
     "source": "StarCoder2-7B bias + residual + LayerNorm (hidden 4608), batch 13 decode (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# h: one rounding of the fp32 sum, one ulp at most (a different summation order or the CPU
# interpreter's truncating bf16 conversion). out: fp32 statistics in a different order, one rounding.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-4},
    "fp16": {"atol": 1e-3, "rtol": 2e-3},
    "bf16": {"atol": 8e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.layer_norm", "torch.layer_norm", "torch.nn.LayerNorm",
             "torch.native_layer_norm", "torch.var", "torch.var_mean", "torch.std", "torch.std_mean")


def bias_residual_layernorm(x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                            ln_bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    sf = x.float() + bias.float() + residual.float()
    mean = sf.mean(dim=-1, keepdim=True)
    d = sf - mean
    var = (d * d).mean(dim=-1, keepdim=True)
    out = (d * torch.rsqrt(var + EPS) * weight.float() + ln_bias.float()).to(x.dtype)
    return out, sf.to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    M, N = dims["M"], dims["N"]
    x = maybe_outliers(randn((M, N), dtype, gen), mode, gen)
    bias = randn((N,), dtype, gen, std=0.1)
    # the residual stream drifts away from zero mean per token
    residual = randn((M, N), torch.float32, gen, std=2.0) + randn((M, 1), torch.float32, gen, std=3.0)
    residual = maybe_outliers(residual.to(dtype), mode, gen)
    weight = randn((N,), dtype, gen, std=0.1, mean=1.0)
    ln_bias = randn((N,), dtype, gen, std=0.1)
    return (x, bias, residual, weight, ln_bias)


def flops(dims, dtype):
    # 2 adds, mean, subtract, square, sum, scale, *w, +b: 9 per element
    return 9.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    # read x, residual, bias, w, b; write out and h
    e = elem_size(dtype)
    return 4.0 * dims["M"] * dims["N"] * e + 3.0 * dims["N"] * e
