"""Gather along the last dimension (torch.gather(x, -1, idx)): router weights of chosen experts, logprobs of chosen tokens."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randint, randn

NAME = "gather_lastdim"
CATEGORY = "index"
DESCRIPTION = """
Per-row gather along the last dimension: x[M, N] and int64 indices idx[M, K], each in [0, N):
    out[i, k] = x[i, idx[i, k]]
Output is [M, K] in x's dtype, bit-exact. Indices may repeat within a row and come in no
particular order. Only M * K elements of x are needed (the op reads a sliver of each row:
SPARSE_READS). Row offsets i * N pass 2^31 elements for large vocabularies: index in int64.
"outlier" mode scales rare values of x by up to 1000x (a copy must carry them unchanged).
"""
ENTRY_POINT = "gather_lastdim"
DTYPES = ("fp32", "fp16", "bf16")
SPARSE_READS = True
SHAPES = [
    {"name": "deepseek_v3_router_prefill", "dims": {"M": 16384, "N": 256, "K": 8}, "weight": 0.3, "phase": "prefill",
     "source": "DeepSeek-V3 MoE gate: original scores of the top-8 of 256 routed experts, 16384-token prefill"},
    {"name": "llama3_8b_topk_logprobs_decode", "dims": {"M": 256, "N": 128256, "K": 8}, "weight": 0.3,
     "phase": "decode", "source": "Llama-3-8B logprobs of 8 requested tokens per row (vocab 128256), batch-256 decode"},
    {"name": "llama3_8b_prompt_logprobs_prefill", "dims": {"M": 8192, "N": 128256, "K": 1}, "weight": 0.2,
     "phase": "prefill", "source": "Llama-3-8B log-probability of each prompt token (vocab 128256), 8192 tokens"},
    {"name": "qwen2_7b_logprobs_decode_tail", "dims": {"M": 13, "N": 152064, "K": 5}, "weight": 0.2,
     "phase": "decode", "source": "Qwen2-7B logprobs=5 (vocab 152064), batch 13 (tail sizes)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"M": 4, "N": 128, "K": 8}},
    {"name": "tail", "dims": {"M": 7, "N": 1000, "K": 5}},
]
# A gather copies values: nothing but an exact match is right.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 0.0},
    "fp16": {"atol": 0.0, "rtol": 0.0},
    "bf16": {"atol": 0.0, "rtol": 0.0},
}
# the whole job is moving data: PyTorch copies would do it (benchmarks/harness/calls.py, COPIED_SHARE)
MOVES_DATA = True
FORBIDDEN = ("torch.gather", "torch.take_along_dim", "torch.take", "torch.index_select", "torch.Tensor.gather",
             "torch.nn.functional.embedding", "torch.embedding")


def gather_lastdim(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    return torch.gather(x, -1, idx)


def make_inputs(dims, dtype, mode, gen):
    M, N, K = dims["M"], dims["N"], dims["K"]
    x = maybe_outliers(randn((M, N), dtype, gen, std=2.0), mode, gen)
    idx = randint((M, K), 0, N, gen)
    return (x, idx)


def flops(dims, dtype):
    # a pure copy: no arithmetic
    return 0.0


def min_bytes(dims, dtype):
    M, K = dims["M"], dims["K"]
    # indices read, picked elements read, outputs written
    return M * K * (8.0 + 2.0 * elem_size(dtype))
