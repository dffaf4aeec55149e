"""GEMM + bias + GELU(tanh) epilogue: the first MLP projection of StarCoder2 / Phi-2 / GPT-2."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "linear_bias_gelu_tanh"
CATEGORY = "fusion"
DESCRIPTION = """
A linear layer with bias and a GELU (tanh approximation, "gelu_pytorch_tanh" / "gelu_new") fused
into its epilogue. Inputs x[M, K] (activations, row-major), w[N, K] (the nn.Linear weight layout:
row n is output feature n) and b[N], all in the task dtype:
    h[i, n] = sum_k x[i, k] * w[n, k] + b[n]          products accumulated in fp32
    y[i, n] = 0.5 * h * (1 + tanh(sqrt(2/pi) * (h + 0.044715 * h^3)))     in fp32
y is [M, N] in the task dtype. The reference runs the GEMM as eager PyTorch does (cuBLAS, fp32
accumulation, product rounded to the dtype) and the epilogue in fp32; a fused kernel that keeps
the accumulator in fp32 through the epilogue (one rounding) is within tolerance of it. fp32 means IEEE fp32 products (TF32 is rejected by
the tolerance). w is scaled by 1/sqrt(K) so h is O(1); "outlier" mode puts rare 10-1000x values
in x (activation outliers) but not in w: with both, an fp16 product can pass 65504, and the eager
reference's fp16 h would be inf/NaN where a fused fp32 epilogue is finite. On the CPU (Triton interpreter) bf16 tl.dot is wrong, so bf16 is checked on GPU only.
"""
ENTRY_POINT = "linear_bias_gelu_tanh"
DTYPES = ("fp32", "fp16", "bf16")
PEAK = "matmul"
SHAPES = [
    {"name": "starcoder2_15b_fc_prefill", "dims": {"M": 4096, "N": 24576, "K": 6144}, "weight": 0.35,
     "phase": "prefill",
     "source": "StarCoder2-15B MLP c_fc (6144 -> 24576, bias, gelu_pytorch_tanh), 4096-token prefill; compute-bound"},
    {"name": "starcoder2_15b_fc_decode", "dims": {"M": 32, "N": 24576, "K": 6144}, "weight": 0.25, "phase": "decode",
     "source": "StarCoder2-15B MLP c_fc, batch-32 decode; bandwidth-bound on w"},
    {"name": "phi2_fc1_prefill", "dims": {"M": 8192, "N": 10240, "K": 2560}, "weight": 0.2, "phase": "prefill",
     "source": "Phi-2 MLP fc1 (2560 -> 10240, bias, gelu_new), 8192-token prefill"},
    {"name": "gpt2_xl_fc_decode_tail", "dims": {"M": 13, "N": 6400, "K": 1600}, "weight": 0.2, "phase": "decode",
     "source": "GPT-2-XL MLP c_fc (1600 -> 6400, bias, gelu_new), batch 13 decode (tail size)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"M": 32, "N": 48, "K": 64}},
    {"name": "tail", "dims": {"M": 13, "N": 17, "K": 50}},
]
# h is O(1). fp32: a 1000x activation outlier puts +-40 terms into the running sum, after which
# each of the K adds rounds at ulp(~100): a different order (split-K, as cuBLAS uses for decode)
# moves h by ~1.2e-4 (measured on an H200 (torch 2.11, triton 3.6, 2026-11-29), K = 6144). TF32 inputs leave errors of ~4e-4 std, ~2e-3
# max over a decode output, which these bounds still reject.
# fp16/bf16: fp32 accumulation in any order; the reference rounds h to the dtype, a fused
# epilogue need not: with the final rounding of y, a couple of ulps (2^-11 / 2^-8 relative).
TOLERANCE = {
    "fp32": {"atol": 4e-4, "rtol": 1e-4},
    "fp16": {"atol": 5e-3, "rtol": 5e-3},
    "bf16": {"atol": 2e-2, "rtol": 2e-2},
}
FORBIDDEN = ("torch.matmul", "torch.mm", "torch.bmm", "torch.addmm", "torch.baddbmm", "torch.einsum",
             "torch.tensordot", "torch.inner", "torch.nn.functional.linear", "torch.Tensor.matmul",
             "torch.Tensor.mm", "torch._scaled_mm", "torch.nn.functional.gelu", "torch.tanh")


def linear_bias_gelu_tanh(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    h = torch.matmul(x, w.t()).float() + b.float()
    y = 0.5 * h * (1.0 + torch.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))
    return y.to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    M, N, K = dims["M"], dims["N"], dims["K"]
    x = maybe_outliers(randn((M, K), dtype, gen), mode, gen)
    w = randn((N, K), dtype, gen, std=K ** -0.5)
    b = randn((N,), dtype, gen, std=0.5)
    return (x, w, b)


def flops(dims, dtype):
    # the GEMM dominates; the bias and GELU add ~9 per output element
    return 2.0 * dims["M"] * dims["N"] * dims["K"] + 9.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    M, N, K = dims["M"], dims["N"], dims["K"]
    return (M * K + N * K + N + M * N) * float(elem_size(dtype))
