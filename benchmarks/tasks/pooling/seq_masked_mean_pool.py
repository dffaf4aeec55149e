"""Masked mean pooling over the sequence: sentence-embedding models (sentence-transformers' default pooling)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "seq_masked_mean_pool"
CATEGORY = "pooling"
DESCRIPTION = """
Mean over the valid (non-padding) tokens of each sequence. x[B, T, D] holds right-padded token
embeddings and lengths[B] (int64, 1 <= lengths[b] <= T) the number of valid tokens:
    y[b, d] = (1 / lengths[b]) * sum_{t < lengths[b]} x[b, t, d]
Output [B, D] in x's dtype. Sum in fp32 and round once. Padding
positions hold garbage (large values): they must not be read into the sum, and need not be read
at all (SPARSE_READS: the byte count covers the valid tokens only). Lengths are a fixed
spread over (T/2, T] per batch index. "outlier" mode scales rare values by up to 1000x.
"""
ENTRY_POINT = "seq_masked_mean_pool"
DTYPES = ("fp32", "fp16", "bf16")
SPARSE_READS = True
SHAPES = [
    {"name": "bge_large_b256", "dims": {"B": 256, "T": 512, "D": 1024}, "weight": 0.4, "phase": "prefill",
     "source": "BGE-large / E5-large (BERT-large, hidden 1024) embedding, batch 256 x 512 tokens"},
    {"name": "all_minilm_l6_b512", "dims": {"B": 512, "T": 256, "D": 384}, "weight": 0.3, "phase": "prefill",
     "source": "all-MiniLM-L6-v2 (hidden 384) embedding, batch 512 x 256 tokens"},
    {"name": "all_mpnet_base_b13_tail", "dims": {"B": 13, "T": 384, "D": 768}, "weight": 0.3, "phase": "decode",
     "source": "all-mpnet-base-v2 (hidden 768, max 384 tokens) online embedding, batch 13 (tail)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"B": 2, "T": 16, "D": 64}},
    {"name": "tail", "dims": {"B": 5, "T": 37, "D": 100}},
]
# Means of at most 512 O(1) terms: fp32 sums in different orders agree to ~1e-6.
# fp16/bf16: one rounding of the fp32 mean on each side.
TOLERANCE = {
    "fp32": {"atol": 1e-5, "rtol": 1e-5},
    "fp16": {"atol": 1e-4, "rtol": 2e-3},
    "bf16": {"atol": 1e-3, "rtol": 1.6e-2},
}
FORBIDDEN = ("torch.mean", "torch.sum", "torch.nansum", "torch.nanmean", "torch.cumsum", "torch.matmul",
             "torch.bmm", "torch.einsum", "torch.masked_select", "torch.nn.functional.avg_pool1d")


def seq_lengths(B: int, T: int) -> list[int]:
    """The valid lengths: a fixed spread over (T/2, T], so min_bytes is exact."""
    half = max(T // 2, 1)
    return [T - (b * 97) % half for b in range(B)]


def seq_masked_mean_pool(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    T = x.shape[1]
    valid = torch.arange(T, device=x.device)[None, :] < lengths[:, None]
    xf = torch.where(valid[:, :, None], x.float(), torch.zeros((), dtype=torch.float32, device=x.device))
    return (xf.sum(dim=1) / lengths[:, None].float()).to(x.dtype)


def make_inputs(dims, dtype, mode, gen):
    B, T, D = dims["B"], dims["T"], dims["D"]
    lengths = torch.tensor(seq_lengths(B, T), dtype=torch.int64, device=gen.device)
    x = maybe_outliers(randn((B, T, D), torch.float32, gen), mode, gen)
    # padding positions hold garbage that must not leak into the mean
    pad = torch.arange(T, device=gen.device)[None, :] >= lengths[:, None]
    x = torch.where(pad[:, :, None], torch.full_like(x, 30000.0), x)
    return (x.to(dtype), lengths)


def flops(dims, dtype):
    # one add per valid element, one divide per output
    B, T, D = dims["B"], dims["T"], dims["D"]
    return float(sum(seq_lengths(B, T)) * D + B * D)


def min_bytes(dims, dtype):
    B, T, D = dims["B"], dims["T"], dims["D"]
    return (sum(seq_lengths(B, T)) * D + B * D) * float(elem_size(dtype)) + B * 8.0
