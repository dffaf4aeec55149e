"""Token-embedding lookup: rows of a [V, D] table gathered by int64 token ids."""

import torch

from benchmarks.inputs import elem_size, maybe_outliers, randint, randn

NAME = "embedding"
CATEGORY = "index"
DESCRIPTION = """
Embedding lookup: ids[T] (int64, each in [0, V)) select rows of table[V, D]:
    out[i, :] = table[ids[i], :]
Output is [T, D] in the table's dtype, bit-exact. Ids repeat (the same token twice in a prompt).
Row offsets ids[i] * D exceed 2^31 elements for large tables: index in int64. "outlier" mode
scales rare table values by up to 1000x (a copy must carry them unchanged).
"""
ENTRY_POINT = "embedding"
DTYPES = ("fp32", "fp16", "bf16")
SHAPES = [
    {
        "name": "llama3_8b_prefill",
        "dims": {"T": 8192, "V": 128256, "D": 4096},
        "weight": 0.4,
        "phase": "prefill",
        "source": "Llama-3-8B token embedding (vocab 128256, hidden 4096), 8192-token prefill",
    },
    {
        "name": "llama3_8b_decode",
        "dims": {"T": 32, "V": 128256, "D": 4096},
        "weight": 0.3,
        "phase": "decode",
        "source": "Llama-3-8B token embedding, batch-32 decode",
    },
    {
        "name": "falcon_7b_prefill_tail",
        "dims": {"T": 1000, "V": 65024, "D": 4544},
        "weight": 0.3,
        "phase": "prefill",
        "source": "Falcon-7B word embedding (vocab 65024, hidden 4544, not a power of two), 1000-token prompt",
    },
]
CPU_SHAPES = [
    {"name": "tiny", "dims": {"T": 16, "V": 64, "D": 128}},
    {"name": "tail", "dims": {"T": 37, "V": 50, "D": 1000}},
]
# A gather copies values: nothing but an exact match is right.
TOLERANCE = {
    "fp32": {"atol": 0.0, "rtol": 0.0},
    "fp16": {"atol": 0.0, "rtol": 0.0},
    "bf16": {"atol": 0.0, "rtol": 0.0},
}
SPARSE_READS = True  # only the T gathered rows of the table are read
# the whole job is moving data: PyTorch copies would do it (benchmarks/harness/calls.py, COPIED_SHARE)
MOVES_DATA = True
FORBIDDEN = (
    "torch.nn.functional.embedding",
    "torch.embedding",
    "torch.nn.Embedding",
    "torch.index_select",
    "torch.gather",
    "torch.take",
)


def embedding(ids: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    return table[ids]


def make_inputs(dims, dtype, mode, gen):
    ids = randint((dims["T"],), 0, dims["V"], gen)
    table = maybe_outliers(randn((dims["V"], dims["D"]), dtype, gen), mode, gen)
    return (ids, table)


def flops(dims, dtype):
    # a pure copy: no arithmetic
    return 0.0


def min_bytes(dims, dtype):
    T, V, D = dims["T"], dims["V"], dims["D"]
    # ids are read once, each output row written once; a repeated id's row is read from DRAM
    # only once, so count the expected number of distinct rows among T uniform draws from V.
    distinct = V * (1.0 - (1.0 - 1.0 / V) ** T)
    return T * 8.0 + distinct * D * elem_size(dtype) + T * D * elem_size(dtype)
