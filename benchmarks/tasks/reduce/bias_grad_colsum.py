"""Column sum over tokens: the bias gradient of a Linear layer (db = dy summed over all tokens)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "bias_grad_colsum"
CATEGORY = "reduce"
DESCRIPTION = """
Sum over the leading (token) dimension of a 2-D gradient dy[M, N], i.e. the bias gradient of a
Linear layer with output width N:
    db[j] = sum_i dy[i, j]
Output is [N] in dy's dtype. Accumulate in fp32 over all M rows and round once. The reduction runs down columns: the contiguous dimension is N, the one being kept.
Inputs are scaled by 1/sqrt(M) so the sums are O(1); "outlier" mode adds rare values 10-1000x a
typical element.
"""
ENTRY_POINT = "bias_grad_colsum"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "qwen2_7b_qkv_bias_grad", "dims": {"M": 8192, "N": 4608}, "weight": 0.4, "phase": "train",
     "source": "Qwen2-7B fused q/k/v projection bias (3584 + 2 x 512 = 4608), 8192-token training step"},
    {"name": "gpt2_xl_fc_bias_grad", "dims": {"M": 16384, "N": 6400}, "weight": 0.3, "phase": "train",
     "source": "GPT-2-XL MLP c_fc bias (1600 -> 6400), 16 x 1024-token training step"},
    {"name": "gpt2_xl_proj_bias_grad_tail", "dims": {"M": 1000, "N": 1600}, "weight": 0.3, "phase": "train",
     "source": "GPT-2-XL attention c_proj bias (1600), one 1000-token sequence (tail size)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 64, "N": 128}},
    {"name": "tail", "dims": {"M": 100, "N": 300}},
]
# The sums are O(1); fp32 accumulations in different orders (tree, split-M, per-lane) agree to
# ~sqrt(M) * 6e-8 (~1e-5 at M = 16384 in the worst case). fp16/bf16: one rounding of that, one ulp apart.
TOLERANCE = {
    "fp32": {"atol": 2e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.sum", "torch.Tensor.sum", "torch.nansum", "torch.mean", "torch.cumsum", "torch.einsum",
             "torch.matmul", "torch.mv", "torch.addmv")


def bias_grad_colsum(dy: torch.Tensor) -> torch.Tensor:
    return dy.float().sum(dim=0).to(dy.dtype)


def make_inputs(dims, dtype, mode, gen):
    M, N = dims["M"], dims["N"]
    # outliers are drawn at unit scale, then scaled with everything else
    dy = maybe_outliers(randn((M, N), torch.float32, gen), mode, gen) * M ** -0.5
    return (dy.to(dtype),)


def flops(dims, dtype):
    # one add per element
    return 1.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return (dims["M"] + 1.0) * dims["N"] * elem_size(dtype)
