"""bias_grad_colsum_fp16: generated from the task's PyTorch reference by agents/offline/codegen/translate.py.

Reference ops (aten, in order): _to_copy.default, sum.dim_IntList, _to_copy.default.
Structure: row. Each program takes BLOCK_R rows of the last dim (N columns) as a
[BLOCK_R, BLOCK_N] tile, BLOCK_R = TILE // BLOCK_N (at least 1). Rows that fit in
MAX_BLOCK_N columns are one tile of next_power_of_2(N) columns; reductions run along
the tile's rows with their identity in the masked lanes. Longer rows are walked in
tiles of MAX_BLOCK_N columns: one pass per reduction, one to store.
The reduction runs over a dim before the last: a row's elements lie `inner` apart
(the numel of the dims after it), and row r starts at (r // inner) * N * inner + r % inner:
a program's BLOCK_R rows are adjacent in memory, so its tiles are read contiguously
down the rows (small MAX_BLOCK_N, large TILE).
Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded
where it rounds them; one cast to the output dtype on store.
Tunables: num_warps, MAX_BLOCK_N, TILE.
"""

import torch
import triton
import triton.language as tl

KB_META = {'tunables': {'num_warps': [1, 2, 4, 8], 'MAX_BLOCK_N': [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384], 'TILE': [1024, 2048, 4096, 8192, 16384]}, 'generated_by': 'agents/offline/codegen/translate.py', 'structure': 'row'}


@triton.jit
def _bias_grad_colsum_row_kernel(dy_ptr, out0_ptr, N, R, inner, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    _rmask = row < R
    base = (row // inner) * (N * inner) + row % inner
    cols = tl.arange(0, BLOCK_N)[None, :]
    _cmask = cols < N
    mask = _rmask & _cmask
    dy = tl.load(dy_ptr + base + cols * inner, mask=mask, other=0.0).to(tl.float32)
    v0 = tl.sum(tl.where(mask, dy, 0.0), axis=1, keep_dims=True)  # sum.dim_IntList
    v1 = (v0).to(tl.float16).to(tl.float32)  # _to_copy.default
    tl.store(out0_ptr + row, v1.to(out0_ptr.dtype.element_ty), mask=_rmask)


@triton.jit
def _bias_grad_colsum_looped_kernel(dy_ptr, out0_ptr, N, R, inner, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    _rmask = row < R
    base = (row // inner) * (N * inner) + row % inner
    acc0 = tl.full([BLOCK_R, BLOCK_N], 0.0, tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)[None, :]
        _cmask = cols < N
        mask = _rmask & _cmask
        dy = tl.load(dy_ptr + base + cols * inner, mask=mask, other=0.0).to(tl.float32)
        acc0 = acc0 + tl.where(mask, dy, 0.0)
    v0 = tl.sum(acc0, axis=1, keep_dims=True)  # sum.dim_IntList
    v1 = (v0).to(tl.float16).to(tl.float32)  # _to_copy.default
    tl.store(out0_ptr + row, v1.to(out0_ptr.dtype.element_ty), mask=_rmask)


def bias_grad_colsum(dy, num_warps: int = 8, MAX_BLOCK_N: int = 512, TILE: int = 8192):
    dy = dy.contiguous()
    N = dy.shape[0]
    out0 = torch.empty((dy.shape[-1],), dtype=dy.dtype, device=dy.device)
    if N == 0 or out0.numel() == 0:
        return out0
    R = out0.numel()
    inner = dy.shape[-1]
    BLOCK_N = triton.next_power_of_2(N)
    if BLOCK_N <= MAX_BLOCK_N:
        kernel = _bias_grad_colsum_row_kernel
    else:
        kernel, BLOCK_N = _bias_grad_colsum_looped_kernel, MAX_BLOCK_N
    BLOCK_R = triton.next_power_of_2(max(1, min(TILE // BLOCK_N, R)))
    kernel[(triton.cdiv(R, BLOCK_R),)](dy, out0, N, R, inner, BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N, num_warps=num_warps)
    return out0
