"""Grouped (MoE) GEMM: tokens already sorted by expert, each group times its own expert weight."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn
from benchmarks.tolerances import sum_abs_terms

NAME = "moe_grouped_gemm"
CATEGORY = "matmul"
DESCRIPTION = """
The expert projection of a mixture-of-experts layer after routing and sorting. x[T, K] holds the
T routed token rows grouped by expert; expert_offsets[E + 1] (int32, non-decreasing,
expert_offsets[0] = 0, expert_offsets[E] = T) says rows expert_offsets[e] .. expert_offsets[e+1]-1
belong to expert e; w[E, N, K] holds each expert's weight in nn.Linear layout. Then
    y[t, n] = sum_k x[t, k] * w[e, n, k]      for every row t of expert e
y is [T, N] in x's dtype; accumulate in fp32 (IEEE products for fp32, no TF32). Groups are
uneven (a skewed router) and some experts receive no rows at all (dims IDLE of them, chosen at
random): their weights need not be read, and the byte count assumes they are not. The group
sizes live on the device: a kernel that copies them to the host to plan its grid pays a
synchronisation, one that derives its tile schedule on the device does not. w is N(0, 1/K);
"outlier" mode puts rare 10-1000x values in x and w. bf16 is checked on GPU only.
"""
ENTRY_POINT = "moe_grouped_gemm"
DTYPES = ("fp32", "fp16", "bf16")
SPARSE_READS = True  # idle experts' weights are not read
SHAPES = [
    {"name": "mixtral_up_prefill", "dims": {"T": 8192, "E": 8, "N": 14336, "K": 4096, "IDLE": 0}, "weight": 0.3,
     "phase": "prefill",
     "source": "Mixtral-8x7B expert up projection (4096 -> 14336), 4096-token prefill x top-2 = 8192 rows, 8 experts"},
    {"name": "deepseek_v3_down_prefill_ep8", "dims": {"T": 4096, "E": 32, "N": 7168, "K": 2048, "IDLE": 0},
     "weight": 0.3, "phase": "prefill",
     "source": "DeepSeek-V3 routed-expert down projection (moe_intermediate 2048 -> 7168), 32 local experts per "
               "GPU (256 experts, EP=8), 4096 tokens x top-8 / 8 = 4096 rows"},
    {"name": "mixtral_down_decode", "dims": {"T": 64, "E": 8, "N": 4096, "K": 14336, "IDLE": 0}, "weight": 0.2,
     "phase": "decode",
     "source": "Mixtral-8x7B expert down projection (14336 -> 4096), batch-32 decode x top-2 = 64 rows"},
    {"name": "deepseek_v3_down_decode_ep8_tail", "dims": {"T": 29, "E": 32, "N": 7168, "K": 2048, "IDLE": 12},
     "weight": 0.2, "phase": "decode",
     "source": "DeepSeek-V3 routed-expert down projection, batch-32 decode x top-8 / EP 8 = 29 rows on 32 local "
               "experts, 12 of them idle (tail size)"},
]
CPU_SHAPES = [
    {"name": "small", "dims": {"T": 37, "E": 4, "N": 24, "K": 40, "IDLE": 1}},
    {"name": "tail", "dims": {"T": 20, "E": 6, "N": 33, "K": 24, "IDLE": 2}},
]
# y is O(1). fp32: accumulation order moves results by ~1e-6; TF32 by ~5e-4 (rejected).
# fp16/bf16: one rounding of the fp32 accumulator (2^-11 / 2^-8 relative).
# "terms": each output sums K products; outlier inputs make small outputs out of large terms, and
# fp32 accumulation in another order than cuBLAS's differs by about sqrt(K) * eps32 * sum |terms|
# (2^-16 for K up to 65536); error_terms gives sum_k |x_k| |w_k|. On the H200 (2026-11-29, torch
# 2.11, triton 3.6) the reference solution failed outlier mode without them: fp32 47 of 117M
# elements on mixtral_up_prefill, fp16 1 of 262k on mixtral_down_decode (docs/results/
# solutions_resweep_h200.md).
TOLERANCE = {
    "fp32": {"atol": 1e-4, "rtol": 1e-4, "terms": 2**-16},
    "fp16": {"atol": 5e-3, "rtol": 5e-3, "terms": 2**-16},
    "bf16": {"atol": 2e-2, "rtol": 2e-2, "terms": 2**-16},
}
FORBIDDEN = ("torch.matmul", "torch.mm", "torch.bmm", "torch.baddbmm", "torch.addmm", "torch.einsum",
             "torch.tensordot", "torch.nn.functional.linear", "torch.Tensor.matmul", "torch._grouped_mm",
             "torch._scaled_grouped_mm", "torch._scaled_mm")


def moe_grouped_gemm(x: torch.Tensor, w: torch.Tensor, expert_offsets: torch.Tensor) -> torch.Tensor:
    T, N = x.shape[0], w.shape[1]
    y = torch.empty((T, N), dtype=x.dtype, device=x.device)
    bounds = expert_offsets.tolist()
    for e in range(w.shape[0]):
        start, end = bounds[e], bounds[e + 1]
        if end > start:
            y[start:end] = torch.matmul(x[start:end], w[e].t())
    return y


def error_terms(x, w, expert_offsets):
    """sum_k |x[t, k]| |w[e, n, k]| per output element, in fp32."""
    return sum_abs_terms(moe_grouped_gemm, (x, w, expert_offsets))


def make_inputs(dims, dtype, mode, gen):
    T, E, N, K, idle = dims["T"], dims["E"], dims["N"], dims["K"], dims["IDLE"]
    dev = gen.device
    active = torch.ones(E, dtype=torch.int64, device=dev)
    active[torch.randperm(E, generator=gen, device=dev)[:idle]] = 0
    n_active = int(active.sum())
    assert T >= n_active, "every active expert gets at least one row"
    # skewed router load: every active expert gets one row, the rest split by weights u^3
    p = (torch.rand(E, generator=gen, device=dev) ** 3 + 0.02) * active
    extra = torch.floor(p / p.sum() * (T - n_active)).to(torch.int64)
    counts = active + extra
    counts[torch.argmax(p)] += T - int(counts.sum())
    offsets = torch.zeros(E + 1, dtype=torch.int32, device=dev)
    offsets[1:] = torch.cumsum(counts, 0).to(torch.int32)
    x = maybe_outliers(randn((T, K), dtype, gen), mode, gen)
    w = maybe_outliers(randn((E, N, K), torch.float32, gen), mode, gen) * K ** -0.5
    return (x, w.to(dtype), offsets)


def flops(dims, dtype):
    return 2.0 * dims["T"] * dims["N"] * dims["K"]


def min_bytes(dims, dtype):
    T, E, N, K, idle = dims["T"], dims["E"], dims["N"], dims["K"], dims["IDLE"]
    # x read, the active experts' weights read, y written, offsets read
    return (T * K + (E - idle) * N * K + T * N) * float(elem_size(dtype)) + 4.0 * (E + 1)
