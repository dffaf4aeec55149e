"""RMSNorm with a weight over the hidden dimension (Llama, Qwen2, Mistral, DeepSeek)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "rmsnorm"
CATEGORY = "normalization"
DESCRIPTION = """
RMSNorm over the last dimension of x[M, N], with weight w[N] (same dtype as x):
    rstd[i] = 1 / sqrt(sum_j x[i, j]^2 / N + eps),   eps = 1e-5
    y[i, j] = x[i, j] * rstd[i] * w[j]
Output has x's shape and dtype. The sum of squares and the scaling in fp32, one rounding at the
end. In "outlier" mode rare values reach 1000x: their squares overflow fp16 (max 65504), so
squaring in the input dtype is wrong.
"""
ENTRY_POINT = "rmsnorm"
DTYPES = ("fp32", "fp16", "bf16")
EPS = 1e-5
SHAPES = [
    {
        "name": "llama3_8b_prefill",
        "dims": {"M": 8192, "N": 4096},
        "weight": 0.4,
        "phase": "prefill",
        "source": "Llama-3-8B input RMSNorm (hidden 4096, eps 1e-5), 8192-token prefill",
    },
    {
        "name": "llama3_8b_decode",
        "dims": {"M": 32, "N": 4096},
        "weight": 0.2,
        "phase": "decode",
        "source": "Llama-3-8B RMSNorm, batch-32 decode",
    },
    {
        "name": "qwen2_7b_prefill_tail",
        "dims": {"M": 4093, "N": 3584},
        "weight": 0.2,
        "phase": "prefill",
        "source": "Qwen2-7B RMSNorm (hidden 3584, not a power of two), 4093-token prefill (tail size)",
    },
    {
        "name": "deepseek_v3_decode",
        "dims": {"M": 13, "N": 7168},
        "weight": 0.2,
        "phase": "decode",
        "source": "DeepSeek-V3 RMSNorm (hidden 7168), batch 13 decode",
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
    "torch.nn.functional.rms_norm",
    "torch.rms_norm",
    "torch.nn.RMSNorm",
    "torch.norm",
    "torch.linalg.norm",
    "torch.linalg.vector_norm",
)


def rmsnorm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    xf = x.float()
    rstd = torch.rsqrt((xf * xf).mean(dim=-1, keepdim=True) + EPS)
    return (xf * rstd * weight.float()).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    M, N = dims["M"], dims["N"]
    x = maybe_outliers(randn((M, N), dtype, gen), mode, gen)
    weight = randn((N,), dtype, gen, std=0.1, mean=1.0)
    return (x, weight)


def flops(dims, dtype):
    # square, sum, scale by rstd, *w: 4 per element
    return 4.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    e = elem_size(dtype)
    return 2.0 * dims["M"] * dims["N"] * e + dims["N"] * e
