"""Gather a sequence's K and V rows from a slot-addressed KV cache pool (prefix-cache reuse, SDPA fallback)."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randn

NAME = "kv_cache_gather"
CATEGORY = "index"
DESCRIPTION = """
index_select of cache slots: k_cache[S, H, Dh] and v_cache[S, H, Dh] hold one token per slot (a
paged pool flattened to slots, vLLM-style); slots[T] (int64, distinct, each in [0, S)) lists a
sequence's tokens in order. Returns the contiguous tuple
    (k_cache[slots], v_cache[slots])        each [T, H, Dh] in the cache dtype, bit-exact.
Only T of the S slots are read (SPARSE_READS). Slot offsets pass 2^31 elements for large pools:
index in int64. "outlier" mode scales rare cache values by up to 1000x.
"""
ENTRY_POINT = "kv_cache_gather"
DTYPES = ("fp32", "fp16", "bf16")
SPARSE_READS = True
SHAPES = [
    {"name": "llama3_8b_prefix_8k", "dims": {"S": 131072, "T": 8192, "H": 8, "Dh": 128}, "weight": 0.4,
     "phase": "prefill", "source": "Llama-3-8B one layer's KV pool (8 kv heads x 128), 131072 slots; gather an "
                                   "8192-token cached prefix for chunked prefill"},
    {"name": "qwen2_7b_prefix_4k", "dims": {"S": 131072, "T": 4096, "H": 4, "Dh": 128}, "weight": 0.3,
     "phase": "prefill", "source": "Qwen2-7B KV pool (4 kv heads x 128), 4096-token prefix"},
    {"name": "falcon_7b_mqa_decode_tail", "dims": {"S": 65536, "T": 1000, "H": 1, "Dh": 64}, "weight": 0.3,
     "phase": "decode", "source": "Falcon-7B multi-query KV pool (1 kv head x 64), one 1000-token context (tail)"},
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"S": 64, "T": 16, "H": 2, "Dh": 32}},
    {"name": "tail", "dims": {"S": 300, "T": 37, "H": 3, "Dh": 40}},
]
# A gather copies values: nothing but an exact match is right.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 0.0},
    "fp16": {"atol": 0.0, "rtol": 0.0},
    "bf16": {"atol": 0.0, "rtol": 0.0},
}
# the whole job is moving data: PyTorch copies would do it (benchmarks/harness/calls.py, COPIED_SHARE)
MOVES_DATA = True
FORBIDDEN = ("torch.index_select", "torch.gather", "torch.take", "torch.take_along_dim",
             "torch.nn.functional.embedding", "torch.embedding")


def kv_cache_gather(k_cache: torch.Tensor, v_cache: torch.Tensor,
                    slots: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.index_select(k_cache, 0, slots), torch.index_select(v_cache, 0, slots)


def make_inputs(dims, dtype, mode, gen):
    S, T, H, Dh = dims["S"], dims["T"], dims["H"], dims["Dh"]
    k_cache = maybe_outliers(randn((S, H, Dh), dtype, gen), mode, gen)
    v_cache = maybe_outliers(randn((S, H, Dh), dtype, gen), mode, gen)
    slots = torch.randperm(S, generator=gen, device=gen.device)[:T]
    return (k_cache, v_cache, slots)


def flops(dims, dtype):
    # a pure copy
    return 0.0


def min_bytes(dims, dtype):
    T, H, Dh = dims["T"], dims["H"], dims["Dh"]
    # slots read; T rows of K and of V read, and written
    return T * 8.0 + 4.0 * T * H * Dh * elem_size(dtype)
