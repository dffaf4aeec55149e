"""Matrix-vector product y = A x: a batch-1 decode projection, weight times one activation."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "linalg_matvec"
CATEGORY = "linalg"
DESCRIPTION = """
Matrix-vector product of a row-major matrix a[M, K] with a vector x[K] (same dtype):
    y[i] = sum_k a[i, k] * x[k]
y is [M] in the inputs' dtype. Accumulate in fp32, round once. This is the batch-1 decode
projection (a = the nn.Linear weight, x = the one token's activation): a is read once and the
time is a's bytes at HBM bandwidth. a is N(0, 1/K) so y is O(1); "outlier" mode puts rare
10-1000x values in a and x.
"""
ENTRY_POINT = "linalg_matvec"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "llama3_8b_gate_up_bs1", "dims": {"M": 28672, "K": 4096}, "weight": 0.3, "phase": "decode",
     "source": "Llama-3-8B fused gate/up projection (4096 -> 2 x 14336), batch-1 decode"},
    {"name": "llama3_70b_down_bs1", "dims": {"M": 8192, "K": 28672}, "weight": 0.3, "phase": "decode",
     "source": "Llama-3-70B MLP down projection (28672 -> 8192), batch-1 decode"},
    {"name": "qwen2_7b_qkv_bs1", "dims": {"M": 4608, "K": 3584}, "weight": 0.2, "phase": "decode",
     "source": "Qwen2-7B fused QKV projection (3584 -> 3584 + 2 x 512), batch-1 decode"},
    {"name": "qwen2_7b_down_bs1_tail", "dims": {"M": 3584, "K": 18944}, "weight": 0.2, "phase": "decode",
     "source": "Qwen2-7B MLP down projection (18944 -> 3584), batch-1 decode (non-power-of-two sizes)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"M": 33, "K": 100}},
    {"name": "tail", "dims": {"M": 7, "K": 1000}},
]
# y is O(1). fp32: summation order moves results by ~1e-6. fp16/bf16: one rounding of the fp32
# sum (2^-11 / 2^-8 relative); the CPU interpreter truncates fp32 -> bf16 (up to 2^-7).
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4},
    "fp16": {"atol": 2e-3, "rtol": 2e-3},
    "bf16": {"atol": 1e-2, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.mv", "torch.addmv", "torch.matmul", "torch.mm", "torch.einsum", "torch.tensordot",
             "torch.inner", "torch.nn.functional.linear", "torch.Tensor.mv", "torch.Tensor.matmul")


def linalg_matvec(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    # cuBLAS / CPU gemv accumulate half-precision inputs in fp32
    return torch.mv(a, x)


def make_inputs(dims, dtype, mode, gen):
    M, K = dims["M"], dims["K"]
    a = maybe_outliers(randn((M, K), torch.float32, gen), mode, gen) * K ** -0.5
    x = maybe_outliers(randn((K,), dtype, gen), mode, gen)
    return (a.to(dtype), x)


def flops(dims, dtype):
    return 2.0 * dims["M"] * dims["K"]


def min_bytes(dims, dtype):
    M, K = dims["M"], dims["K"]
    return (M * K + K + M) * float(elem_size(dtype))
