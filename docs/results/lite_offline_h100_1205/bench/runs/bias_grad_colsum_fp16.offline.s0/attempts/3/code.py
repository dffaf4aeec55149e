"""bias_grad_colsum_fp16: generated from the task's PyTorch reference by agents/offline/codegen/translate.py.

Reference ops (aten, in order): _to_copy.default, sum.dim_IntList, _to_copy.default.
Structure: row. One program per row of the last dim (N columns). A row that fits in
MAX_BLOCK_N columns is one tile of next_power_of_2(N); reductions put their identity in
the masked lanes. A longer row is walked in tiles: one pass per reduction, one to store.
The reduction runs over a dim before the last: a row's elements lie `inner` apart
(the numel of the dims after it), and row r starts at (r // inner) * N * inner + r % inner.
Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded
where it rounds them; one cast to the output dtype on store.
Tunables: num_warps, MAX_BLOCK_N.
"""

import torch
import triton
import triton.language as tl

KB_META = {'tunables': {'num_warps': [1, 2, 4, 8], 'MAX_BLOCK_N': [2048, 4096, 8192, 16384]}, 'generated_by': 'agents/offline/codegen/translate.py', 'structure': 'row'}


@triton.jit
def _bias_grad_colsum_row_kernel(dy_ptr, out0_ptr, N, inner, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = (row // inner) * (N * inner) + row % inner
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    dy = tl.load(dy_ptr + base + cols * inner, mask=mask, other=0.0).to(tl.float32)
    v0 = tl.sum(tl.where(mask, dy, 0.0), axis=0)  # sum.dim_IntList
    v1 = (v0).to(tl.float16).to(tl.float32)  # _to_copy.default
    tl.store(out0_ptr + row, v1.to(out0_ptr.dtype.element_ty))


@triton.jit
def _bias_grad_colsum_looped_kernel(dy_ptr, out0_ptr, N, inner, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = (row // inner) * (N * inner) + row % inner
    acc0 = tl.full([BLOCK_N], 0.0, tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        dy = tl.load(dy_ptr + base + cols * inner, mask=mask, other=0.0).to(tl.float32)
        acc0 = acc0 + tl.where(mask, dy, 0.0)
    v0 = tl.sum(acc0, axis=0)  # sum.dim_IntList
    v1 = (v0).to(tl.float16).to(tl.float32)  # _to_copy.default
    tl.store(out0_ptr + row, v1.to(out0_ptr.dtype.element_ty))


def bias_grad_colsum(dy, num_warps: int = 1, MAX_BLOCK_N: int = 2048):
    dy = dy.contiguous()
    N = dy.shape[0]
    out0 = torch.empty((dy.shape[-1],), dtype=dy.dtype, device=dy.device)
    if N == 0 or out0.numel() == 0:
        return out0
    R = out0.numel()
    inner = dy.shape[-1]
    BLOCK_N = triton.next_power_of_2(N)
    if BLOCK_N <= MAX_BLOCK_N:
        _bias_grad_colsum_row_kernel[(R,)](dy, out0, N, inner, BLOCK_N=BLOCK_N, num_warps=num_warps)
    else:
        _bias_grad_colsum_looped_kernel[(R,)](dy, out0, N, inner, BLOCK_N=MAX_BLOCK_N, num_warps=num_warps)
    return out0
