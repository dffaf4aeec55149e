"""linalg_batched_outer_fp16: generated from the task's PyTorch reference by agents/offline/codegen/translate.py.

Reference ops (aten, in order): _to_copy.default, unsqueeze.default, _to_copy.default,
unsqueeze.default, mul.Tensor, _to_copy.default.
Structure: row, columns independent (no reduction or scan). Each program takes
BLOCK_N = min(next_power_of_2(N), BLOCK_C) columns of BLOCK_R rows of the last dim
(N columns), BLOCK_R = TILE // BLOCK_N (at least 1): a grid of row blocks x column
tiles, so a few long rows still fill the GPU and many short ones share programs.
Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded
where it rounds them; one cast to the output dtype on store.
Tunables: num_warps, BLOCK_C, TILE.
"""

import torch
import triton
import triton.language as tl

KB_META = {'tunables': {'num_warps': [1, 2, 4, 8], 'BLOCK_C': [256, 512, 1024, 2048, 4096], 'TILE': [1024, 2048, 4096, 8192]}, 'generated_by': 'agents/offline/codegen/translate.py', 'structure': 'row'}


@triton.jit
def _linalg_batched_outer_row_kernel(u_ptr, v_ptr, out0_ptr, N, R, group_1, BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    _rmask = row < R
    base = row * N
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    _cmask = cols < N
    mask = _rmask & _cmask
    u = tl.load(u_ptr + row, mask=_rmask, other=0.0).to(tl.float32)
    v = tl.load(v_ptr + (row // group_1) * N + cols, mask=mask, other=0.0).to(tl.float32)
    v0 = u * v  # mul.Tensor
    v1 = (v0).to(tl.float16).to(tl.float32)  # _to_copy.default
    tl.store(out0_ptr + base + cols, v1.to(out0_ptr.dtype.element_ty), mask=mask)


def linalg_batched_outer(u, v, num_warps: int = 4, BLOCK_C: int = 1024, TILE: int = 2048):
    u = u.contiguous()
    v = v.contiguous()
    N = v.shape[-1]
    out0 = torch.empty((u.shape[0], u.shape[-1], N), dtype=u.dtype, device=u.device)
    if N == 0 or out0.numel() == 0:
        return out0
    R = out0.numel() // N
    group_1 = u.shape[-1]
    BLOCK_N = min(triton.next_power_of_2(N), BLOCK_C)
    BLOCK_R = triton.next_power_of_2(max(1, min(TILE // BLOCK_N, R)))
    _linalg_batched_outer_row_kernel[(triton.cdiv(R, BLOCK_R), triton.cdiv(N, BLOCK_N))](u, v, out0, N, R, group_1, BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N, num_warps=num_warps)
    return out0
