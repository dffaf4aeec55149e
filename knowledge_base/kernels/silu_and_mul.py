"""SiLU-and-mul (SwiGLU activation): out = silu(x[:, :H]) * x[:, H:], one fused pass.

Op: for x[M, 2H] (gate | up), out[i, j] = silu(x[i, j]) * x[i, H + j], out [M, H].
Traffic: read 2 * M * H * elem, write M * H * elem: 3 * M * H * elem, bandwidth-bound
(GPU.md: the 8192 x 14336 bf16 roofline is ~166 us on H200; eager PyTorch takes ~630 us).
Tiling: 2-D grid (row, column block of BLOCK_H); each program loads the gate block and the
matching up block of the same row (two coalesced streams H elements apart), the last column
block masked. Row offsets are int64 (M * 2H passes 2^31 for 70B prefill shapes).
Math in fp32: silu(g) = g / (1 + exp(-g)), which saturates instead of producing NaN.
Tunables: BLOCK_H (power of two, 512-4096), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "fused_gated_activation",
    "category": "fusion",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": [
        "2d_grid_row_by_column_block",
        "tail_mask",
        "int64_offsets",
        "fp32_compute",
        "overflow_safe_sigmoid",
        "elementwise_fusion",
    ],
    "tunables": {"BLOCK_H": [512, 1024, 2048, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"silu_and_mul_bf16": 0.5452, "silu_and_mul_fp16": 0.5481, "silu_and_mul_fp32": 0.5426, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _silu_and_mul_kernel(x_ptr, out_ptr, H, stride_x, stride_o, BLOCK_H: tl.constexpr):
    # axis 0: a row; axis 1: a BLOCK_H slice of the output columns
    row = tl.program_id(0).to(tl.int64)
    blk = tl.program_id(1)
    cols = blk * BLOCK_H + tl.arange(0, BLOCK_H)
    mask = cols < H
    x_row = x_ptr + row * stride_x
    # x is [M, 2H]: the gate is the first H columns, the up projection the next H
    g = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(x_row + H + cols, mask=mask, other=0.0).to(tl.float32)
    # silu(g) * u in fp32, one rounding at the store
    y = g / (1.0 + tl.exp(-g)) * u
    tl.store(out_ptr + row * stride_o + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def silu_and_mul(x: torch.Tensor, BLOCK_H: int = 1024, num_warps: int = 4) -> torch.Tensor:
    assert x.dim() == 2 and x.shape[1] % 2 == 0
    x = x.contiguous()
    M = x.shape[0]
    H = x.shape[1] // 2
    out = torch.empty((M, H), dtype=x.dtype, device=x.device)
    block = min(BLOCK_H, triton.next_power_of_2(H))
    _silu_and_mul_kernel[(M, triton.cdiv(H, block))](
        x, out, H, x.stride(0), out.stride(0), BLOCK_H=block, num_warps=num_warps
    )
    return out
