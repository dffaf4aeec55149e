"""silu_and_mul_bf16: generated from the task's PyTorch reference by agents/offline/codegen/translate.py.

Reference ops (aten, in order): slice.Tensor, _to_copy.default, slice.Tensor, _to_copy.default,
neg.default, exp.default, add.Tensor, div.Tensor, mul.Tensor, _to_copy.default.
Structure: row, columns independent (no reduction or scan). Each program takes
BLOCK_N = min(next_power_of_2(N), BLOCK_C) columns of one row of the last dim (N
columns): a grid of rows x column tiles, so a few long rows still fill the GPU.
Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded
where it rounds them; one cast to the output dtype on store.
Tunables: num_warps, BLOCK_C.
"""

import torch
import triton
import triton.language as tl

KB_META = {'tunables': {'num_warps': [1, 2, 4, 8], 'BLOCK_C': [256, 512, 1024, 2048, 4096]}, 'generated_by': 'agents/offline/codegen/translate.py', 'structure': 'row'}


@triton.jit
def _silu_and_mul_row_kernel(x_ptr, out0_ptr, N, x_row_stride, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * N
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    v0 = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)  # slice.Tensor
    v1 = tl.load(x_ptr + row * x_row_stride + N + cols, mask=mask, other=0.0).to(tl.float32)  # slice.Tensor
    v2 = -v0  # neg.default
    v3 = tl.exp(v2)  # exp.default
    v4 = v3 + 1.0  # add.Tensor
    v5 = v0 / v4  # div.Tensor
    v6 = v5 * v1  # mul.Tensor
    v7 = (v6).to(tl.bfloat16).to(tl.float32)  # _to_copy.default
    tl.store(out0_ptr + base + cols, v7.to(out0_ptr.dtype.element_ty), mask=mask)


def silu_and_mul(x, num_warps: int = 4, BLOCK_C: int = 1024):
    x = x.contiguous()
    N = x.shape[-1] // 2
    out0 = torch.empty((*x.shape[:-1], N), dtype=x.dtype, device=x.device)
    if N == 0 or out0.numel() == 0:
        return out0
    R = out0.numel() // N
    x_row_stride = x.stride(-2)
    BLOCK_N = min(triton.next_power_of_2(N), BLOCK_C)
    _silu_and_mul_row_kernel[(R, triton.cdiv(N, BLOCK_N))](x, out0, N, x_row_stride, BLOCK_N=BLOCK_N, num_warps=num_warps)
    return out0
