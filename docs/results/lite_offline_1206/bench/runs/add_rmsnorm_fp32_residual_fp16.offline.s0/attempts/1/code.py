"""add_rmsnorm_fp32_residual_fp16: generated from the task's PyTorch reference by agents/offline/codegen/translate.py.

Reference ops (aten, in order): _to_copy.default, add.Tensor, mul.Tensor, mean.dim, add.Tensor,
rsqrt.default, mul.Tensor, _to_copy.default, mul.Tensor, _to_copy.default.
Structure: row. Each program takes BLOCK_R rows of the last dim (N columns) as a
[BLOCK_R, BLOCK_N] tile, BLOCK_R = TILE // BLOCK_N (at least 1). Rows that fit in
MAX_BLOCK_N columns are one tile of next_power_of_2(N) columns; reductions run along
the tile's rows with their identity in the masked lanes. Longer rows are walked in
tiles of MAX_BLOCK_N columns: one pass per reduction, one to store. A call with at
most DECODE_ROWS rows (fewer than the GPU's SMs) takes one row per program, with
DECODE_ROW_WARPS warps and DECODE_ROW_BLOCK_N in place of num_warps and MAX_BLOCK_N.
Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded
where it rounds them; one cast to the output dtype on store.
Tunables: num_warps, MAX_BLOCK_N, TILE, DECODE_ROW_WARPS, DECODE_ROW_BLOCK_N.
"""

import torch
import triton
import triton.language as tl

KB_META = {'tunables': {'num_warps': [1, 2, 4, 8], 'MAX_BLOCK_N': [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384], 'TILE': [1024, 2048, 4096, 8192, 16384], 'DECODE_ROW_WARPS': [2, 4, 8, 16], 'DECODE_ROW_BLOCK_N': [2048, 4096, 8192, 16384, 32768]}, 'generated_by': 'agents/offline/codegen/translate.py', 'structure': 'row'}


@triton.jit
def _add_rmsnorm_fp32_residual_row_kernel(x_ptr, residual_ptr, weight_ptr, out0_ptr, out1_ptr, N, R, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    _rmask = row < R
    base = row * N
    cols = tl.arange(0, BLOCK_N)[None, :]
    _cmask = cols < N
    mask = _rmask & _cmask
    x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    residual = tl.load(residual_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    weight = tl.load(weight_ptr + cols, mask=_cmask, other=0.0).to(tl.float32)
    v0 = residual + x  # add.Tensor
    v1 = v0 * v0  # mul.Tensor
    v2 = tl.sum(tl.where(mask, v1, 0.0), axis=1, keep_dims=True)  # mean.dim
    v3 = v2 / N  # mean.dim
    v4 = v3 + 1e-05  # add.Tensor
    v5 = tl.rsqrt(v4)  # rsqrt.default
    v6 = v0 * v5  # mul.Tensor
    v7 = v6 * weight  # mul.Tensor
    v8 = (v7).to(tl.float16).to(tl.float32)  # _to_copy.default
    tl.store(out0_ptr + base + cols, v8.to(out0_ptr.dtype.element_ty), mask=mask)
    tl.store(out1_ptr + base + cols, v0.to(out1_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _add_rmsnorm_fp32_residual_looped_kernel(x_ptr, residual_ptr, weight_ptr, out0_ptr, out1_ptr, N, R, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    _rmask = row < R
    base = row * N
    acc0 = tl.full([BLOCK_R, BLOCK_N], 0.0, tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)[None, :]
        _cmask = cols < N
        mask = _rmask & _cmask
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        residual = tl.load(residual_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        v0 = residual + x  # add.Tensor
        v1 = v0 * v0  # mul.Tensor
        acc0 = acc0 + tl.where(mask, v1, 0.0)
    v2 = tl.sum(acc0, axis=1, keep_dims=True)  # mean.dim
    v3 = v2 / N  # mean.dim
    v4 = v3 + 1e-05  # add.Tensor
    v5 = tl.rsqrt(v4)  # rsqrt.default
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)[None, :]
        _cmask = cols < N
        mask = _rmask & _cmask
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        residual = tl.load(residual_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        weight = tl.load(weight_ptr + cols, mask=_cmask, other=0.0).to(tl.float32)
        v0 = residual + x  # add.Tensor
        v6 = v0 * v5  # mul.Tensor
        v7 = v6 * weight  # mul.Tensor
        v8 = (v7).to(tl.float16).to(tl.float32)  # _to_copy.default
        tl.store(out0_ptr + base + cols, v8.to(out0_ptr.dtype.element_ty), mask=mask)
        tl.store(out1_ptr + base + cols, v0.to(out1_ptr.dtype.element_ty), mask=mask)


def add_rmsnorm_fp32_residual(x, residual, weight, num_warps: int = 4, MAX_BLOCK_N: int = 8192, TILE: int = 2048, DECODE_ROW_WARPS: int = 8, DECODE_ROW_BLOCK_N: int = 8192, DECODE_ROWS: int = 128):
    x = x.contiguous()
    residual = residual.contiguous()
    weight = weight.contiguous()
    N = x.shape[-1]
    out0 = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    out1 = torch.empty(x.shape, dtype=residual.dtype, device=x.device)
    if N == 0 or out0.numel() == 0:
        return (out0, out1)
    R = out0.numel() // N
    if R <= DECODE_ROWS:  # few rows: one a program, the decode configuration
        num_warps, MAX_BLOCK_N, TILE = DECODE_ROW_WARPS, DECODE_ROW_BLOCK_N, 1
    BLOCK_N = triton.next_power_of_2(N)
    if BLOCK_N <= MAX_BLOCK_N:
        kernel = _add_rmsnorm_fp32_residual_row_kernel
    else:
        kernel, BLOCK_N = _add_rmsnorm_fp32_residual_looped_kernel, MAX_BLOCK_N
    BLOCK_R = triton.next_power_of_2(max(1, min(TILE // BLOCK_N, R)))
    kernel[(triton.cdiv(R, BLOCK_R),)](x, residual, weight, out0, out1, N, R, BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N, num_warps=num_warps)
    return (out0, out1)
