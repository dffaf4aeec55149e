"""cumprod_fp16: generated from the task's PyTorch reference by agents/offline/codegen/translate.py.

Reference ops (aten, in order): _to_copy.default, cumprod.default, _to_copy.default.
Structure: row. Each program takes BLOCK_R rows of the last dim (N columns) as a
[BLOCK_R, BLOCK_N] tile, BLOCK_R = TILE // BLOCK_N (at least 1). Rows that fit in
MAX_BLOCK_N columns are one tile of next_power_of_2(N) columns; reductions run along
the tile's rows with their identity in the masked lanes. Longer rows are walked in
tiles of MAX_BLOCK_N columns: one pass per reduction, one to store.
Scans (cumsum/cumprod) run along the tile with tl.cumsum/tl.cumprod, identity in the
masked lanes; in the looped kernel each carries the sum/product of the tiles before it.
Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded
where it rounds them; one cast to the output dtype on store.
Tunables: num_warps, MAX_BLOCK_N, TILE.
"""

import torch
import triton
import triton.language as tl

KB_META = {'tunables': {'num_warps': [1, 2, 4, 8], 'MAX_BLOCK_N': [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384], 'TILE': [1024, 2048, 4096, 8192, 16384]}, 'generated_by': 'agents/offline/codegen/translate.py', 'structure': 'row'}


@triton.jit
def _cumprod_row_kernel(x_ptr, out0_ptr, N, R, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    _rmask = row < R
    base = row * N
    cols = tl.arange(0, BLOCK_N)[None, :]
    _cmask = cols < N
    mask = _rmask & _cmask
    x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    v0 = tl.cumprod(tl.where(mask, x, 1.0), axis=1)  # cumprod.default
    v1 = (v0).to(tl.float16).to(tl.float32)  # _to_copy.default
    tl.store(out0_ptr + base + cols, v1.to(out0_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _cumprod_looped_kernel(x_ptr, out0_ptr, N, R, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    _rmask = row < R
    base = row * N
    carry_v0 = tl.full([BLOCK_R, 1], 1.0, tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)[None, :]
        _cmask = cols < N
        mask = _rmask & _cmask
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        v0 = tl.cumprod(tl.where(mask, x, 1.0), axis=1)  # cumprod.default
        v0_tile = tl.sum(tl.where(tl.arange(0, BLOCK_N)[None, :] == BLOCK_N - 1, v0, 0.0), axis=1, keep_dims=True)
        v0 = v0 * carry_v0
        carry_v0 = carry_v0 * v0_tile
        v1 = (v0).to(tl.float16).to(tl.float32)  # _to_copy.default
        tl.store(out0_ptr + base + cols, v1.to(out0_ptr.dtype.element_ty), mask=mask)


def cumprod(x, num_warps: int = 4, MAX_BLOCK_N: int = 8192, TILE: int = 2048):
    x = x.contiguous()
    N = x.shape[-1]
    out0 = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if N == 0 or out0.numel() == 0:
        return out0
    R = out0.numel() // N
    BLOCK_N = triton.next_power_of_2(N)
    if BLOCK_N <= MAX_BLOCK_N:
        kernel = _cumprod_row_kernel
    else:
        kernel, BLOCK_N = _cumprod_looped_kernel, MAX_BLOCK_N
    BLOCK_R = triton.next_power_of_2(max(1, min(TILE // BLOCK_N, R)))
    kernel[(triton.cdiv(R, BLOCK_R),)](x, out0, N, R, BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N, num_warps=num_warps)
    return out0
