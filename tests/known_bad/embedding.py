# expect: numerical_mismatch
# bug: wrong stride: the launcher passes table.stride(1) (1) as the row stride, so row ids[i] is read from flat offset ids[i] instead of ids[i] * D
"""Known-bad embedding lookup: the row stride argument is the column stride."""

import torch
import triton
import triton.language as tl


@triton.jit
def _embedding_kernel(ids_ptr, table_ptr, out_ptr, D, stride_t, stride_o, BLOCK_D: tl.constexpr):
    tok = tl.program_id(0)
    blk = tl.program_id(1)
    idx = tl.load(ids_ptr + tok).to(tl.int64)
    cols = blk * BLOCK_D + tl.arange(0, BLOCK_D)
    mask = cols < D
    vals = tl.load(table_ptr + idx * stride_t + cols, mask=mask)
    tl.store(out_ptr + tok.to(tl.int64) * stride_o + cols, vals, mask=mask)


def embedding(
    ids: torch.Tensor, table: torch.Tensor, BLOCK_D: int = 1024, num_warps: int = 4
) -> torch.Tensor:
    table = table.contiguous()
    T = ids.shape[0]
    D = table.shape[1]
    out = torch.empty((T, D), dtype=table.dtype, device=table.device)
    block = min(BLOCK_D, triton.next_power_of_2(D))
    _embedding_kernel[(T, triton.cdiv(D, block))](
        ids, table, out, D, table.stride(1), out.stride(0), BLOCK_D=block, num_warps=num_warps
    )
    return out
