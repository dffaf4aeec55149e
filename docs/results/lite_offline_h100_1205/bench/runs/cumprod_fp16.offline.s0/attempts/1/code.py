"""cumprod_fp16: generated from the task's PyTorch reference by agents/offline/codegen/translate.py.

Reference ops (aten, in order): _to_copy.default, cumprod.default, _to_copy.default.
Structure: row. One program per row of the last dim (N columns). A row that fits in
MAX_BLOCK_N columns is one tile of next_power_of_2(N); reductions put their identity in
the masked lanes. A longer row is walked in tiles: one pass per reduction, one to store.
Scans (cumsum/cumprod) run along the tile with tl.cumsum/tl.cumprod, identity in the
masked lanes; in the looped kernel each carries the sum/product of the tiles before it.
Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded
where it rounds them; one cast to the output dtype on store.
Tunables: num_warps, MAX_BLOCK_N.
"""

import torch
import triton
import triton.language as tl

KB_META = {'tunables': {'num_warps': [1, 2, 4, 8], 'MAX_BLOCK_N': [2048, 4096, 8192, 16384]}, 'generated_by': 'agents/offline/codegen/translate.py', 'structure': 'row'}


@triton.jit
def _cumprod_row_kernel(x_ptr, out0_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * N
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    v0 = tl.cumprod(tl.where(mask, x, 1.0), axis=0)  # cumprod.default
    v1 = (v0).to(tl.float16).to(tl.float32)  # _to_copy.default
    tl.store(out0_ptr + base + cols, v1.to(out0_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _cumprod_looped_kernel(x_ptr, out0_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * N
    carry_v0 = tl.full([BLOCK_N], 1.0, tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        v0 = tl.cumprod(tl.where(mask, x, 1.0), axis=0)  # cumprod.default
        v0_tile = tl.sum(tl.where(tl.arange(0, BLOCK_N) == BLOCK_N - 1, v0, 0.0), axis=0)
        v0 = v0 * carry_v0
        carry_v0 = carry_v0 * v0_tile
        v1 = (v0).to(tl.float16).to(tl.float32)  # _to_copy.default
        tl.store(out0_ptr + base + cols, v1.to(out0_ptr.dtype.element_ty), mask=mask)


def cumprod(x, num_warps: int = 4, MAX_BLOCK_N: int = 8192):
    x = x.contiguous()
    N = x.shape[-1]
    out0 = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if N == 0 or out0.numel() == 0:
        return out0
    R = out0.numel() // N
    BLOCK_N = triton.next_power_of_2(N)
    if BLOCK_N <= MAX_BLOCK_N:
        _cumprod_row_kernel[(R,)](x, out0, N, BLOCK_N=BLOCK_N, num_warps=num_warps)
    else:
        _cumprod_looped_kernel[(R,)](x, out0, N, BLOCK_N=MAX_BLOCK_N, num_warps=num_warps)
    return out0
