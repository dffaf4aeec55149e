"""Masked max pooling over the sequence: sentence-transformers' max-token pooling, InferSent-style encoders."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "seq_masked_max_pool"
CATEGORY = "pooling"
DESCRIPTION = """
Maximum over the valid (non-padding) tokens of each sequence. x[B, T, D] holds right-padded
token embeddings and lengths[B] (int64, 1 <= lengths[b] <= T) the number of valid tokens:
    y[b, d] = max_{t < lengths[b]} x[b, t, d]
Output [B, D] in x's dtype, bit-exact. Padding positions hold garbage (large positive values):
they must not take part, and need not be read at all (SPARSE_READS: the byte count covers the
valid tokens only). Lengths are a fixed spread over (T/2, T] per batch index. "outlier" mode
scales rare values by up to 1000x.
"""
ENTRY_POINT = "seq_masked_max_pool"
DTYPES = ("fp32", "fp16", "bf16")
SPARSE_READS = True
SHAPES = [
    {"name": "bge_large_b256", "dims": {"B": 256, "T": 512, "D": 1024}, "weight": 0.4, "phase": "prefill",
     "source": "BERT-large-sized encoder (hidden 1024) with max-token pooling, batch 256 x 512 tokens"},
    {"name": "all_minilm_l6_b512", "dims": {"B": 512, "T": 256, "D": 384}, "weight": 0.3, "phase": "prefill",
     "source": "MiniLM-L6 (hidden 384) with max-token pooling, batch 512 x 256 tokens"},
    {"name": "mpnet_base_b13_tail", "dims": {"B": 13, "T": 384, "D": 768}, "weight": 0.3, "phase": "decode",
     "source": "MPNet-base (hidden 768, max 384 tokens) with max-token pooling, batch 13 (tail)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "T": 16, "D": 64}},
    {"name": "tail", "dims": {"B": 5, "T": 37, "D": 100}},
]
# A max selects one input value: exact.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 0.0},
    "fp16": {"atol": 0.0, "rtol": 0.0},
    "bf16": {"atol": 0.0, "rtol": 0.0},
}
FORBIDDEN = ("torch.max", "torch.amax", "torch.maximum", "torch.cummax", "torch.sort", "torch.topk",
             "torch.nn.functional.max_pool1d", "torch.nn.functional.adaptive_max_pool1d", "torch.masked_select")


def seq_lengths(B: int, T: int) -> list[int]:
    """The valid lengths: a fixed spread over (T/2, T], so min_bytes is exact."""
    half = max(T // 2, 1)
    return [T - (b * 97) % half for b in range(B)]


def seq_masked_max_pool(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    T = x.shape[1]
    valid = torch.arange(T, device=x.device)[None, :] < lengths[:, None]
    xm = torch.where(valid[:, :, None], x, torch.full((), float("-inf"), dtype=x.dtype, device=x.device))
    return xm.amax(dim=1)


def make_inputs(dims, dtype, mode, gen):
    B, T, D = dims["B"], dims["T"], dims["D"]
    lengths = torch.tensor(seq_lengths(B, T), dtype=torch.int64, device=gen.device)
    x = maybe_outliers(randn((B, T, D), torch.float32, gen), mode, gen)
    # padding positions hold garbage that would win every max
    pad = torch.arange(T, device=gen.device)[None, :] >= lengths[:, None]
    x = torch.where(pad[:, :, None], torch.full_like(x, 30000.0), x)
    return (x.to(dtype), lengths)


def flops(dims, dtype):
    # one compare per valid element
    B, T, D = dims["B"], dims["T"], dims["D"]
    return float(sum(seq_lengths(B, T)) * D)


def min_bytes(dims, dtype):
    B, T, D = dims["B"], dims["T"], dims["D"]
    return (sum(seq_lengths(B, T)) * D + B * D) * float(elem_size(dtype)) + B * 8.0
