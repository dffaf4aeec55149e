"""Row gather: copy whole rows of a 2-D table selected by an index vector.

Op: out[i, :] = table[idx[i], :] for i < N, with table [R, C] and idx an int32/int64 vector of
row numbers in [0, R). Indices may repeat and come in any order. This is an embedding lookup, an
index_select along dim 0, or the read side of a paged/KV gather; the output is a bit-exact copy in
the table's dtype (loads and stores of the same dtype, no arithmetic), so any float or integer
dtype works unchanged.
Traffic: N index reads plus N * C * elem written, and at most N * C * elem read from the table
(fewer distinct rows when indices repeat: a second read of a hot row is usually an L2 hit). The
table itself can be far larger than what is touched -- a 128k x 4096 vocabulary is 1 GiB in bf16
-- so the cost is the gathered rows only; nothing here scales with R.
Tiling: grid (cdiv(N, BLOCK_R), cdiv(C, BLOCK_C)). Each program loads BLOCK_R indices once, turns
them into row offsets, and copies a [BLOCK_R, BLOCK_C] tile: every row of the tile is a contiguous
BLOCK_C-element run in both table and output, which keeps the loads coalesced even though the rows
themselves are scattered. Column blocks split a wide row across programs so a short index vector
(a decode step: tens of tokens) still fills the machine; several rows per program amortise the
index load and the launch when rows are narrow. Ragged N and C are handled by the tile mask.
int64 offsets: the row offset idx * row_stride is computed in int64 (idx cast before the
multiply). 128256 rows x 4096 columns is 5.3e8 elements, and wider tables or strided views pass
2^31 quickly; an int32 product there wraps into a wrong (or illegal) address with no error.
Strides: the table may be any 2-D view whose rows are dense (column stride 1), e.g. a slice of a
larger weight; the output is a fresh contiguous [N, C] tensor. Indices are trusted: an id outside
[0, R) reads out of bounds, so validate on the host where ids are untrusted.
Tunables: BLOCK_C (power of two, 256-4096; >= C makes the column grid 1), BLOCK_R (1-16 rows; more
rows for narrow C, 1-2 for wide rows), num_warps (2-8; 4 for a 1-4 KiB row slice).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gather_rows",
    "category": "index",
    "dtypes": ["fp32", "fp16", "bf16", "int32", "int8"],
    "techniques": [
        "data_dependent_load",
        "int64_offsets",
        "2d_grid_rows_by_column_block",
        "bit_exact_copy",
        "masked_tail",
        "embedding_lookup",
    ],
    "tunables": {
        "BLOCK_R": [1, 2, 4, 8, 16],
        "BLOCK_C": [256, 512, 1024, 2048, 4096],
        "num_warps": [2, 4, 8],
    },
    "verified_on": ["NVIDIA H200"],
    "attainment": {"8192 ids into 128256x4096 bf16": 0.6978, "source": "docs/results/templates_h200_2026-12-02.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-12-02)"},
    "template": True,
}


@triton.jit
def _row_gather_kernel(
    idx_ptr,
    table_ptr,
    out_ptr,
    N,
    C,
    stride_table_row,
    stride_out_row,
    BLOCK_R: tl.constexpr,
    BLOCK_C: tl.constexpr,
):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    row_ok = rows < N
    # which table row each output row copies; masked rows read row 0 and store nothing
    src_row = tl.load(idx_ptr + rows, mask=row_ok, other=0).to(tl.int64)
    mask = row_ok[:, None] & (cols < C)[None, :]
    src = table_ptr + src_row[:, None] * stride_table_row + cols[None, :]
    dst = out_ptr + rows.to(tl.int64)[:, None] * stride_out_row + cols[None, :]
    tl.store(dst, tl.load(src, mask=mask), mask=mask)


def row_gather(
    idx: torch.Tensor,
    table: torch.Tensor,
    BLOCK_R: int = 4,
    BLOCK_C: int = 1024,
    num_warps: int = 4,
) -> torch.Tensor:
    """idx int [N] (row numbers in [0, R)); table [R, C] with dense rows -> out [N, C] = table[idx]."""
    assert idx.dim() == 1, f"idx must be 1-D, got shape {tuple(idx.shape)}"
    assert table.dim() == 2, f"table must be 2-D, got shape {tuple(table.shape)}"
    assert idx.dtype in (torch.int32, torch.int64), f"idx must be int32/int64, got {idx.dtype}"
    assert table.stride(1) == 1 or table.shape[1] == 1, "table rows must be dense (column stride 1)"
    idx = idx.contiguous()
    n, c = idx.shape[0], table.shape[1]
    out = torch.empty((n, c), dtype=table.dtype, device=table.device)
    if n == 0 or c == 0:
        return out
    block_c = min(BLOCK_C, triton.next_power_of_2(c))
    grid = (triton.cdiv(n, BLOCK_R), triton.cdiv(c, block_c))
    _row_gather_kernel[grid](
        idx,
        table,
        out,
        n,
        c,
        table.stride(0),
        out.stride(0),
        BLOCK_R=BLOCK_R,
        BLOCK_C=block_c,
        num_warps=num_warps,
    )
    return out
