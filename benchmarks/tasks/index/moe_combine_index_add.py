"""MoE combine as index_add: routed expert outputs scattered back onto their tokens, on top of the shared expert."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "moe_combine_index_add"
CATEGORY = "index"
DESCRIPTION = """
The combine step of a dropless top-K MoE layer, as x.index_add(0, idx, src):
    out[t, :] = x[t, :] + sum_{r : idx[r] = t} src[r, :]
x[T, D] is the shared-expert output (DeepSeek-style; or zeros-like base), src[T * K, D] holds the
already gate-weighted outputs of the routed experts in expert-sorted order, and idx[T * K]
(int64) is the token each src row belongs to. Every token appears in idx exactly K times
(top-K routing, no drops), scattered over the expert groups, so destinations collide.
Output is [T, D] in x's dtype. Accumulate each token's K + 1 terms in fp32 and round once. The
reference sums in fp32 in a fixed order (deterministic); a kernel using fp32 atomic adds is
within the tolerance, though its bits may vary run to run (the judge flags that, it does not
fail it). The inputs must not be modified (no in-place index_add_ on x). "outlier" mode scales
rare values of x and src by 10-1000x.
"""
ENTRY_POINT = "moe_combine_index_add"
DTYPES = ("fp32", "fp16", "bf16")
BASELINE = "moe_combine_index_add_baseline"
SHAPES = [
    {"name": "deepseek_v3_prefill", "dims": {"T": 4096, "K": 8, "D": 7168}, "weight": 0.4, "phase": "prefill",
     "source": "DeepSeek-V3 MoE combine (hidden 7168, top-8 of 256 routed + 1 shared expert), 4096-token prefill"},
    {"name": "mixtral_8x7b_prefill", "dims": {"T": 8192, "K": 2, "D": 4096}, "weight": 0.3, "phase": "prefill",
     "source": "Mixtral-8x7B MoE combine (hidden 4096, top-2 of 8; zero base), 8192-token prefill"},
    {"name": "deepseek_v3_decode", "dims": {"T": 32, "K": 8, "D": 7168}, "weight": 0.2, "phase": "decode",
     "source": "DeepSeek-V3 MoE combine, batch-32 decode"},
    {"name": "qwen2_57b_a14b_decode_tail", "dims": {"T": 13, "K": 8, "D": 3584}, "weight": 0.1, "phase": "decode",
     "source": "Qwen2-57B-A14B MoE combine (hidden 3584, top-8 of 64 + shared expert), batch 13 (tail)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"T": 8, "K": 2, "D": 64}},
    {"name": "tail", "dims": {"T": 13, "K": 3, "D": 200}},
]
# K + 1 <= 9 terms of O(1): fp32 sums in different orders agree to ~1e-6. In "outlier" mode
# terms reach ~350-1000 and can cancel to an O(1) result: fp32 order then moves it by ~1e-4
# absolute (measured 2.4e-5 on an H200 (torch 2.11, triton 3.6, 2026-11-29) with atomics), hence atol 2e-4 -- a missing or doubled
# term is off by ~0.35. fp16/bf16: one rounding of the fp32 sum on each side, one ulp apart.
TOLERANCE = {
    "fp32": {"atol": 2e-4, "rtol": 1e-5},
    "fp16": {"atol": 1e-3, "rtol": 2e-3},
    "bf16": {"atol": 1e-2, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.index_add", "torch.Tensor.index_add", "torch.Tensor.index_add_", "torch.scatter_add",
             "torch.Tensor.scatter_add_", "torch.scatter_reduce", "torch.Tensor.index_put_", "torch.index_put",
             "torch.bincount", "torch.segment_reduce", "torch.sum", "torch.matmul", "torch.mm", "torch.bmm",
             "torch.sort", "torch.argsort")


def moe_combine_index_add(x: torch.Tensor, idx: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    T, D = x.shape
    K = src.shape[0] // T
    # group src rows by destination token, keeping their order: a fixed summation order
    order = torch.argsort(idx, stable=True)
    routed = src.float()[order].view(T, K, D).sum(dim=1)
    return (x.float() + routed).to(x.dtype)


def moe_combine_index_add_baseline(x: torch.Tensor, idx: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """The one-call PyTorch version (atomic adds on CUDA, in x's dtype), timed as the baseline."""
    return x.index_add(0, idx, src)


def make_inputs(dims, dtype, mode, gen):
    T, K, D = dims["T"], dims["K"], dims["D"]
    # expert-sorted order: the K slots of every token land at random rows of src
    idx = torch.arange(T, device=gen.device).repeat_interleave(K)
    idx = idx[torch.randperm(T * K, generator=gen, device=gen.device)]
    x = maybe_outliers(randn((T, D), dtype, gen), mode, gen)
    src = maybe_outliers(randn((T * K, D), dtype, gen, std=K ** -0.5), mode, gen)
    return (x, idx, src)


def flops(dims, dtype):
    # K adds per output element
    return float(dims["T"] * dims["K"] * dims["D"])


def min_bytes(dims, dtype):
    T, K, D = dims["T"], dims["K"], dims["D"]
    # read x, src and idx; write out
    return (T * D * 2.0 + T * K * D) * elem_size(dtype) + T * K * 8.0
