"""Sum of squares of a whole gradient tensor: the squared global norm of gradient clipping."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "grad_global_sumsq"
CATEGORY = "reduce"
DESCRIPTION = """
Squared L2 norm of a flat gradient g[N] (the per-tensor term of clip_grad_norm_'s total norm):
    s = sum_i g[i]^2
Returns a 0-d fp32 tensor whatever g's dtype; square and accumulate in fp32. The reduction spans
the whole tensor (up to 2e8 elements), so it needs many programs and a combine step: a single
sequential fp32 accumulator stagnates once the running sum dwarfs each term. "outlier" mode puts rare 10-1000x spikes in the gradient (they dominate the sum).
"""
ENTRY_POINT = "grad_global_sumsq"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {"name": "llama3_8b_decoder_layer", "dims": {"N": 218103808}, "weight": 0.4, "phase": "train",
     "source": "Llama-3-8B one decoder layer's gradients flattened (attention 41.9M + MLP 176.2M parameters)"},
    {"name": "qwen2_7b_q_proj", "dims": {"N": 12845056}, "weight": 0.4, "phase": "train",
     "source": "Qwen2-7B attention q_proj weight gradient (3584 x 3584)"},
    {"name": "falcon_7b_ln_weight_tail", "dims": {"N": 4544}, "weight": 0.2, "phase": "train",
     "source": "Falcon-7B LayerNorm weight gradient (4544, tail size; launch-bound)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"N": 1000}},
    {"name": "tail", "dims": {"N": 54321}},
]
# All terms are positive, so hierarchical fp32 sums in different orders agree to ~depth * 6e-8
# relative (~1e-6). A single sequential fp32 accumulator over 2e8 terms is off by far more.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 1e-5},
    "fp16": {"atol": 0.0, "rtol": 1e-5},
    "bf16": {"atol": 0.0, "rtol": 1e-5},
}
FORBIDDEN = ("torch.sum", "torch.norm", "torch.linalg", "torch.dot", "torch.vdot", "torch.inner",
             "torch.square", "torch.pow", "torch.mean", "torch.nn.utils", "torch._foreach_norm",
             "torch.matmul", "torch.einsum")


def grad_global_sumsq(g: torch.Tensor) -> torch.Tensor:
    gf = g.float()
    return (gf * gf).sum()


def make_inputs(dims, dtype, mode, gen):
    g = maybe_outliers(randn((dims["N"],), torch.float32, gen), mode, gen) * 1e-3
    return (g.to(dtype),)


def flops(dims, dtype):
    # square and add
    return 2.0 * dims["N"]


def min_bytes(dims, dtype):
    return dims["N"] * elem_size(dtype) + 4.0
