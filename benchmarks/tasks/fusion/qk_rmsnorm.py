"""QK-norm: RMSNorm over head_dim of every query and key head (Qwen3, Gemma-3)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "qk_rmsnorm"
CATEGORY = "fusion"
DESCRIPTION = """
Per-head RMSNorm of queries and keys before RoPE (Qwen3's q_norm / k_norm). Inputs q[T, HQ, D],
k[T, HKV, D], q_weight[D], k_weight[D], all in the task dtype; each head vector is normalised on
its own:
    rstd[t, h]   = 1 / sqrt(sum_d x[t, h, d]^2 / D + eps),   eps = 1e-6
    out[t, h, d] = x[t, h, d] * rstd[t, h] * w[d]
with (x, w) = (q, q_weight) and (k, k_weight). fp32 math, one rounding. Returns (q_out, k_out) with
q's and k's shapes and dtype; inputs are not modified. Rows are short (D = 128): the work is many
tiny reductions, and both tensors should be done in one pass. "outlier" mode puts rare values
up to 1000x in q and k.
"""
ENTRY_POINT = "qk_rmsnorm"
DTYPES = ("fp32", "fp16", "bf16")
EPS = 1e-6
SHAPES = [
    {"name": "qwen3_8b_prefill", "dims": {"T": 8192, "HQ": 32, "HKV": 8, "D": 128}, "weight": 0.35, "phase": "prefill",
     "source": "Qwen3-8B q_norm/k_norm (32 q heads, 8 kv heads, head_dim 128), 8192-token prefill"},
    {"name": "qwen3_8b_decode", "dims": {"T": 32, "HQ": 32, "HKV": 8, "D": 128}, "weight": 0.3, "phase": "decode",
     "source": "Qwen3-8B q_norm/k_norm, batch-32 decode"},
    {"name": "qwen3_32b_prefill", "dims": {"T": 4096, "HQ": 64, "HKV": 8, "D": 128}, "weight": 0.2, "phase": "prefill",
     "source": "Qwen3-32B q_norm/k_norm (64 q heads, 8 kv heads), 4096-token prefill"},
    {"name": "qwen3_30b_a3b_decode_tail", "dims": {"T": 13, "HQ": 32, "HKV": 4, "D": 128}, "weight": 0.15,
     "phase": "decode", "source": "Qwen3-30B-A3B q_norm/k_norm (32 q heads, 4 kv heads), batch 13 decode (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"T": 4, "HQ": 4, "HKV": 2, "D": 32}},
    {"name": "tail", "dims": {"T": 7, "HQ": 3, "HKV": 1, "D": 40}},
]
# fp32 statistics in a different order (~1e-6 relative), one rounding: one ulp apart.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-4},
    "fp16": {"atol": 1e-3, "rtol": 2e-3},
    "bf16": {"atol": 8e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.nn.functional.rms_norm", "torch.rms_norm", "torch.nn.RMSNorm", "torch.norm",
             "torch.linalg.norm", "torch.linalg.vector_norm")


def qk_rmsnorm(q: torch.Tensor, k: torch.Tensor, q_weight: torch.Tensor,
               k_weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    def norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        rstd = torch.rsqrt((xf * xf).mean(dim=-1, keepdim=True) + EPS)
        return (xf * rstd * w.float()).to(x.dtype)

    return norm(q, q_weight), norm(k, k_weight)


def make_inputs(dims, dtype, mode, gen):
    T, HQ, HKV, D = dims["T"], dims["HQ"], dims["HKV"], dims["D"]
    q = maybe_outliers(randn((T, HQ, D), dtype, gen, std=2.0), mode, gen)
    k = maybe_outliers(randn((T, HKV, D), dtype, gen, std=4.0), mode, gen)
    q_weight = randn((D,), dtype, gen, std=0.2, mean=1.0)
    k_weight = randn((D,), dtype, gen, std=0.2, mean=1.0)
    return (q, k, q_weight, k_weight)


def flops(dims, dtype):
    # square, sum, scale by rstd, *w: 4 per element
    return 4.0 * dims["T"] * (dims["HQ"] + dims["HKV"]) * dims["D"]


def min_bytes(dims, dtype):
    # q and k read and written once, both weights read
    e = elem_size(dtype)
    return 2.0 * dims["T"] * (dims["HQ"] + dims["HKV"]) * dims["D"] * e + 2.0 * dims["D"] * e
