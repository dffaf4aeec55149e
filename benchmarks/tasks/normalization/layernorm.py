"""LayerNorm with weight and bias over the hidden dimension (Falcon, Phi-2, GPT-NeoX)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "layernorm"
CATEGORY = "normalization"
DESCRIPTION = """
LayerNorm over the last dimension of x[M, N], with weight w[N] and bias b[N] (same dtype as x):
    mean[i] = sum_j x[i, j] / N
    var[i]  = sum_j (x[i, j] - mean[i])^2 / N          (biased variance)
    y[i, j] = (x[i, j] - mean[i]) / sqrt(var[i] + eps) * w[j] + b[j],   eps = 1e-5
Output has x's shape and dtype. Statistics and the affine transform in fp32, one rounding at the
end. Hidden states have a nonzero mean per row, so E[x^2] - mean^2 loses digits; "outlier" mode
adds rare values up to 1000x that dominate the variance.
"""
ENTRY_POINT = "layernorm"
DTYPES = ("fp32", "fp16", "bf16")
EPS = 1e-5
SHAPES = [
    {
        "name": "falcon_7b_prefill",
        "dims": {"M": 8192, "N": 4544},
        "weight": 0.5,
        "phase": "prefill",
        "source": "Falcon-7B input LayerNorm (hidden 4544, not a power of two), 8192-token prefill",
    },
    {
        "name": "falcon_40b_decode",
        "dims": {"M": 32, "N": 8192},
        "weight": 0.3,
        "phase": "decode",
        "source": "Falcon-40B LayerNorm (hidden 8192), batch-32 decode",
    },
    {
        "name": "phi2_decode_tail",
        "dims": {"M": 13, "N": 2560},
        "weight": 0.2,
        "phase": "decode",
        "source": "Phi-2 LayerNorm (hidden 2560), batch 13 decode (tail size)",
    },
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128}},
    {"name": "tail", "dims": {"M": 7, "N": 1000}},
]
# Both sides reduce in fp32 (order differs: ~1e-6 relative) and round once: outputs may be one
# ulp apart (fp16 2^-10, bf16 2^-7 relative).
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-4},
    "fp16": {"atol": 1e-3, "rtol": 2e-3},
    "bf16": {"atol": 8e-3, "rtol": 1.6e-2},
}
FORBIDDEN = (
    "torch.nn.functional.layer_norm",
    "torch.layer_norm",
    "torch.nn.LayerNorm",
    "torch.native_layer_norm",
    "torch.var",
    "torch.var_mean",
    "torch.std",
)


def layernorm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    mean = xf.mean(dim=-1, keepdim=True)
    d = xf - mean
    var = (d * d).mean(dim=-1, keepdim=True)
    y = d * torch.rsqrt(var + EPS) * weight.float() + bias.float()
    return y.to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    M, N = dims["M"], dims["N"]
    # per-row offsets: hidden states are not zero-mean
    x = randn((M, N), torch.float32, gen) + randn((M, 1), torch.float32, gen, std=2.0)
    x = maybe_outliers(x.to(dtype), mode, gen)
    weight = randn((N,), dtype, gen, std=0.1, mean=1.0)
    bias = randn((N,), dtype, gen, std=0.1)
    return (x, weight, bias)


def flops(dims, dtype):
    # sum, subtract mean, square, sum, scale by rstd, *w, +b: 7 per element
    return 7.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    e = elem_size(dtype)
    return 2.0 * dims["M"] * dims["N"] * e + 2.0 * dims["N"] * e
