"""Top-k values and indices per row, sorted, with a fixed tie rule: MoE routing (top-8 of 256) and top-k sampling."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randint, randn

NAME = "topk"
CATEGORY = "index"
DESCRIPTION = """
The k largest entries of each row of x[M, N] (finite values, k <= N), in descending order:
    values[i, :], indices[i, :] = the first k of row i sorted by (value descending, column ascending)
i.e. equal values are ordered by their column index, smaller first, and which of several equal
values make the cut is decided the same way. Returns the tuple (values [M, k] in x's dtype,
indices [M, k] int64); values are copies, bit-exact. k is passed as a Python int. Note that
torch.topk does not promise this tie order. Mode "ties" draws integer-valued x in [-8, 8], so
every row has many tied maxima; "outlier" mode scales rare values by 10-1000x (they win).
"""
ENTRY_POINT = "topk"
DTYPES = ("fp32", "fp16", "bf16")
MODES = ("ties",)
BASELINE = "topk_baseline"
SHAPES = [
    {"name": "deepseek_v3_router_prefill", "dims": {"M": 8192, "N": 256, "K": 8}, "weight": 0.4, "phase": "prefill",
     "source": "DeepSeek-V3 MoE routing: top-8 of 256 routed experts per token, 8192-token prefill"},
    {"name": "deepseek_v3_router_decode", "dims": {"M": 32, "N": 256, "K": 8}, "weight": 0.2, "phase": "decode",
     "source": "DeepSeek-V3 MoE routing, batch-32 decode"},
    {"name": "llama3_8b_topk_sampling_decode", "dims": {"M": 256, "N": 128256, "K": 8}, "weight": 0.3,
     "phase": "decode", "source": "Llama-3-8B top-k sampling / top logprobs, k = 8 over vocab 128256, batch 256"},
    {"name": "mixtral_router_decode_tail", "dims": {"M": 13, "N": 8, "K": 2}, "weight": 0.1, "phase": "decode",
     "source": "Mixtral-8x7B routing: top-2 of 8 experts, batch 13 (tail)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128, "K": 8}},
    {"name": "tail", "dims": {"M": 3, "N": 3000, "K": 5}},
]
# Values are copies and indices are integers: exact.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 0.0},
    "fp16": {"atol": 0.0, "rtol": 0.0},
    "bf16": {"atol": 0.0, "rtol": 0.0},
}
FORBIDDEN = ("torch.topk", "torch.sort", "torch.argsort", "torch.kthvalue", "torch.max", "torch.argmax",
             "torch.msort", "torch.median", "torch.quantile", "torch.Tensor.topk", "torch.Tensor.sort")


def topk(x: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    # a stable descending sort keeps equal values in column order
    values, indices = torch.sort(x, dim=-1, descending=True, stable=True)
    return values[:, :k].contiguous(), indices[:, :k].contiguous()


def topk_baseline(x: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """What a PyTorch user calls (timed as the eager/compile baseline; a full stable sort of a
    128k-entry row is far slower). Its order among equal values is unspecified."""
    values, indices = torch.topk(x, k, dim=-1, largest=True, sorted=True)
    return values, indices


def make_inputs(dims, dtype, mode, gen):
    shape = (dims["M"], dims["N"])
    if mode == "ties":
        return (randint(shape, -8, 9, gen).to(dtype), dims["K"])
    x = randn(shape, dtype, gen, std=2.0)
    return (maybe_outliers(x, mode, gen), dims["K"])


def flops(dims, dtype):
    # about one compare per element per selection round in a simple kernel; counted as one
    return 1.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    M, N, K = dims["M"], dims["N"], dims["K"]
    return M * N * elem_size(dtype) + M * K * (elem_size(dtype) + 8.0)
