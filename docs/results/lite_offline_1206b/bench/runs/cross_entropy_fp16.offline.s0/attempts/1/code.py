"""cross_entropy_fp16: generated from the task's PyTorch reference by agents/offline/codegen/translate.py.

Stage 1 of 2: Reference ops (aten, in order): _to_copy.default, ne.Scalar, full_like.default,
where.self, amax.default, sub.Tensor, exp.default, sum.dim_IntList, log.default, squeeze.dims,
add.Tensor, unsqueeze.default, gather.default, squeeze.dims, sub.Tensor, full_like.default,
where.self.
Structure: row. Each program takes BLOCK_R rows of the last dim (N columns) as a
[BLOCK_R, BLOCK_N] tile, BLOCK_R = TILE // BLOCK_N (at least 1). Rows that fit in
MAX_BLOCK_N columns are one tile of next_power_of_2(N) columns; reductions run along
the tile's rows with their identity in the masked lanes. Longer rows are walked in
tiles of MAX_BLOCK_N columns: one pass per reduction, one to store. A call with at
most DECODE_ROWS rows (fewer than the GPU's SMs) takes one row per program, with
DECODE_ROW_WARPS warps and DECODE_ROW_BLOCK_N in place of num_warps and MAX_BLOCK_N.
Stage 2 of 2: Reference ops (aten, in order): ne.Scalar, sum.dim_IntList, sum.dim_IntList,
_to_copy.default, div.Tensor.
Structure: total (reductions of the whole tensor). Each program of the first kernel
reduces BLOCK elements (the last block masked) to one partial; one program of the
second reduces the partials in a fixed order (deterministic) and finishes.
Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded
where it rounds them; one cast to the output dtype on store.
Tunables: num_warps, MAX_BLOCK_N, TILE, DECODE_ROW_WARPS, DECODE_ROW_BLOCK_N, BLOCK.
"""

import torch
import triton
import triton.language as tl

KB_META = {'tunables': {'num_warps': [1, 2, 4, 8], 'MAX_BLOCK_N': [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384], 'TILE': [1024, 2048, 4096, 8192, 16384], 'DECODE_ROW_WARPS': [2, 4, 8, 16], 'DECODE_ROW_BLOCK_N': [2048, 4096, 8192, 16384, 32768], 'BLOCK': [256, 512, 1024, 2048, 4096]}, 'generated_by': 'agents/offline/codegen/translate.py', 'structure': 'row>total'}


@triton.jit
def _cross_entropy_s0_row_kernel(logits_ptr, targets_ptr, out0_ptr, N, R, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    _rmask = row < R
    base = row * N
    cols = tl.arange(0, BLOCK_N)[None, :]
    _cmask = cols < N
    mask = _rmask & _cmask
    logits = tl.load(logits_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
    targets = tl.load(targets_ptr + row, mask=_rmask, other=0)
    v0 = targets != (-100)  # ne.Scalar
    v1 = tl.where(v0, targets, 0)  # where.self
    v2 = tl.max(tl.where(mask, logits, float("-inf")), axis=1, keep_dims=True)  # amax.default
    v3 = logits - v2  # sub.Tensor
    v4 = tl.exp(v3)  # exp.default
    v5 = tl.sum(tl.where(mask, v4, 0.0), axis=1, keep_dims=True)  # sum.dim_IntList
    v6 = tl.log(v5)  # log.default
    v7 = v6 + v2  # add.Tensor
    v8 = tl.load(logits_ptr + base + v1, mask=_rmask, other=0.0).to(tl.float32)  # gather.default
    v9 = v7 - v8  # sub.Tensor
    v10 = tl.where(v0, v9, 0.0)  # where.self
    tl.store(out0_ptr + row, v10.to(out0_ptr.dtype.element_ty), mask=_rmask)


@triton.jit
def _cross_entropy_s0_looped_kernel(logits_ptr, targets_ptr, out0_ptr, N, R, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    _rmask = row < R
    base = row * N
    targets = tl.load(targets_ptr + row, mask=_rmask, other=0)
    v0 = targets != (-100)  # ne.Scalar
    v1 = tl.where(v0, targets, 0)  # where.self
    v8 = tl.load(logits_ptr + base + v1, mask=_rmask, other=0.0).to(tl.float32)  # gather.default
    acc0 = tl.full([BLOCK_R, BLOCK_N], float("-inf"), tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)[None, :]
        _cmask = cols < N
        mask = _rmask & _cmask
        logits = tl.load(logits_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        acc0 = tl.maximum(acc0, tl.where(mask, logits, float("-inf")))
    v2 = tl.max(acc0, axis=1, keep_dims=True)  # amax.default
    acc1 = tl.full([BLOCK_R, BLOCK_N], 0.0, tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)[None, :]
        _cmask = cols < N
        mask = _rmask & _cmask
        logits = tl.load(logits_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        v3 = logits - v2  # sub.Tensor
        v4 = tl.exp(v3)  # exp.default
        acc1 = acc1 + tl.where(mask, v4, 0.0)
    v5 = tl.sum(acc1, axis=1, keep_dims=True)  # sum.dim_IntList
    v6 = tl.log(v5)  # log.default
    v7 = v6 + v2  # add.Tensor
    v9 = v7 - v8  # sub.Tensor
    v10 = tl.where(v0, v9, 0.0)  # where.self
    tl.store(out0_ptr + row, v10.to(out0_ptr.dtype.element_ty), mask=_rmask)


def cross_entropy_s0(logits, targets, num_warps: int = 4, MAX_BLOCK_N: int = 8192, TILE: int = 2048, DECODE_ROW_WARPS: int = 8, DECODE_ROW_BLOCK_N: int = 8192, DECODE_ROWS: int = 128, MIN_PROGRAMS: int = 1024):
    logits = logits.contiguous()
    targets = targets.contiguous()
    N = logits.shape[-1]
    out0 = torch.empty(targets.shape, dtype=torch.float32, device=logits.device)
    if N == 0 or out0.numel() == 0:
        return out0
    R = out0.numel()
    if R <= DECODE_ROWS:  # few rows: one a program, the decode configuration
        num_warps, MAX_BLOCK_N, TILE = DECODE_ROW_WARPS, DECODE_ROW_BLOCK_N, 1
    BLOCK_N = triton.next_power_of_2(N)
    if BLOCK_N <= MAX_BLOCK_N:
        kernel = _cross_entropy_s0_row_kernel
    else:
        kernel, BLOCK_N = _cross_entropy_s0_looped_kernel, MAX_BLOCK_N
    BLOCK_R = triton.next_power_of_2(max(1, min(TILE // BLOCK_N, R // MIN_PROGRAMS)))
    kernel[(triton.cdiv(R, BLOCK_R),)](logits, targets, out0, N, R, BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N, num_warps=num_warps)
    return out0


@triton.jit
def _cross_entropy_s1_partial_kernel(targets_ptr, per_row_ptr, part0_ptr, part1_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    targets = tl.load(targets_ptr + offs, mask=mask, other=0)
    per_row = tl.load(per_row_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    v0 = targets != (-100)  # ne.Scalar
    tl.store(part0_ptr + pid, tl.sum(tl.where(mask, per_row, 0.0), axis=0))
    tl.store(part1_ptr + pid, tl.sum(tl.where(mask, v0, 0.0), axis=0))


@triton.jit
def _cross_entropy_s1_finish_kernel(part0_ptr, part1_ptr, out0_ptr, P, n, BLOCK_P: tl.constexpr):
    acc0 = tl.full([BLOCK_P], 0.0, tl.float32)
    for start in range(0, P, BLOCK_P):
        idx = start + tl.arange(0, BLOCK_P)
        acc0 = acc0 + tl.load(part0_ptr + idx, mask=idx < P, other=0.0)
    v1 = tl.sum(acc0, axis=0)  # sum.dim_IntList
    acc1 = tl.full([BLOCK_P], 0.0, tl.float32)
    for start in range(0, P, BLOCK_P):
        idx = start + tl.arange(0, BLOCK_P)
        acc1 = acc1 + tl.load(part1_ptr + idx, mask=idx < P, other=0.0)
    v2 = tl.sum(acc1, axis=0)  # sum.dim_IntList
    v3 = v2.to(tl.float32)  # _to_copy.default
    v4 = v1 / v3  # div.Tensor
    tl.store(out0_ptr, v4.to(out0_ptr.dtype.element_ty))


def cross_entropy_s1(logits, targets, per_row, BLOCK: int = 1024, num_warps: int = 4):
    targets = targets.contiguous()
    per_row = per_row.contiguous()
    out0 = torch.empty((), dtype=per_row.dtype, device=targets.device)
    n = targets.numel()
    P = max(triton.cdiv(n, BLOCK), 1)
    part0 = torch.empty((P,), dtype=torch.float32, device=targets.device)
    part1 = torch.empty((P,), dtype=torch.float32, device=targets.device)
    _cross_entropy_s1_partial_kernel[(P,)](targets, per_row, part0, part1, n, BLOCK=BLOCK, num_warps=num_warps)
    _cross_entropy_s1_finish_kernel[(1,)](part0, part1, out0, P, n, BLOCK_P=1024, num_warps=4)
    return out0


def cross_entropy(logits, targets, num_warps: int = 4, MAX_BLOCK_N: int = 8192, TILE: int = 2048, DECODE_ROW_WARPS: int = 8, DECODE_ROW_BLOCK_N: int = 8192, BLOCK: int = 1024):
    """Stage 1 writes one value per row; stage 2 reduces them to the result."""
    per_row = cross_entropy_s0(logits, targets, num_warps=num_warps, MAX_BLOCK_N=MAX_BLOCK_N, TILE=TILE, DECODE_ROW_WARPS=DECODE_ROW_WARPS, DECODE_ROW_BLOCK_N=DECODE_ROW_BLOCK_N)
    return cross_entropy_s1(logits, targets, per_row, BLOCK=BLOCK, num_warps=num_warps)
