"""3x3 / stride-1 / pad-1 average pool (count_include_pad) on NCHW: nine masked taps summed in fp32, / 9.

Op: y[b, c, i, j] = sum of x[b, c, i + dh, j + dw] over dh, dw in {-1, 0, 1} (outside taps = 0) / 9;
output has x's shape.
Traffic: x read once from DRAM (the nine overlapping taps re-read neighbours from L1/L2) and y
written once: 2 * numel * elem. Bandwidth-bound.
Tiling: 2-D grid (plane b * C + c, BLOCK outputs of the plane in row-major order); each lane
derives (i, j) once and loads its nine taps with bounds masks (zero fill), adding in fp32; the
divide by 9 and one rounding close it. Consecutive lanes read consecutive elements in every
tap: coalesced. Inception maps are small (35x35 = 1225 outputs), so BLOCK covers a plane or two
programs. Plane offsets int64.
Tunables: BLOCK (power of two, 256-4096), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "pooling_2d",
    "category": "pooling",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["program_per_plane_block", "unrolled_window_taps", "zero_padding_masks", "fp32_accumulation",
                   "tail_mask", "int64_offsets"],
    "tunables": {"BLOCK": [256, 1024, 2048, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"avg_pool2d_3x3s1_bf16": 0.118, "avg_pool2d_3x3s1_fp16": 0.1153, "avg_pool2d_3x3s1_fp32": 0.2717, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _avg_pool_3x3s1_kernel(x_ptr, y_ptr, H, W, BLOCK: tl.constexpr):
    # axis 0: one (batch, channel) plane of NCHW x; axis 1: a BLOCK of that plane's output pixels,
    # flattened
    plane = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    out_ok = offs < H * W
    # stride 1 with padding 1 keeps the output H x W: output pixel (i, j) averages the window
    # centred on input (i, j)
    i = offs // W
    j = offs % W
    x_plane = x_ptr + plane * H * W
    acc = tl.zeros([BLOCK], tl.float32)
    # the 3x3 window, unrolled at compile time; neighbouring pixels share inputs, which come from
    # L1/L2
    for dh in tl.static_range(3):
        h = i - 1 + dh
        h_ok = out_ok & (h >= 0) & (h < H)
        for dw in tl.static_range(3):
            w = j - 1 + dw
            # taps off the image read 0 and still count in the divisor (count_include_pad=True,
            # PyTorch's default): always divide by 9
            ok = h_ok & (w >= 0) & (w < W)
            acc += tl.load(x_plane + h * W + w, mask=ok, other=0.0).to(tl.float32)
    tl.store(y_ptr + plane * H * W + offs, (acc / 9.0).to(y_ptr.dtype.element_ty), mask=out_ok)


def avg_pool2d_3x3s1(x: torch.Tensor, BLOCK: int = 1024, num_warps: int = 4) -> torch.Tensor:
    assert x.dim() == 4
    x = x.contiguous()
    B, C, H, W = x.shape
    y = torch.empty_like(x)
    block = min(BLOCK, triton.next_power_of_2(H * W))
    _avg_pool_3x3s1_kernel[(B * C, triton.cdiv(H * W, block))](x, y, H, W, BLOCK=block, num_warps=num_warps)
    return y
