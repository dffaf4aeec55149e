"""3x3 / stride-2 / pad-1 max pool on NCHW: one program per (plane, block of outputs), nine masked taps.

Op: y[b, c, i, j] = max of x[b, c, 2i - 1 + dh, 2j - 1 + dw] over dh, dw in {0, 1, 2}, taps
outside the map ignored (they load -inf); output [B, C, floor((H-1)/2)+1, floor((W-1)/2)+1].
Traffic: x read once from DRAM (each input element feeds up to four windows, but the re-reads of
neighbouring taps hit L1/L2), y written once: (H W + Ho Wo) * B * C * elem. Bandwidth-bound.
Tiling: 2-D grid (plane b * C + c, BLOCK outputs of that plane in row-major order); each lane
derives its (i, j) once and loads the nine taps with bounds masks. Within a tap, consecutive
lanes read every other input element, so a warp's sectors are fully used across the dw taps.
The comparison is exact in the input dtype (done in fp32, which is exact for fp16/bf16).
Plane offsets int64.
Tunables: BLOCK (power of two, 256-4096), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "pooling_2d",
    "category": "pooling",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["program_per_plane_block", "unrolled_window_taps", "neg_inf_padding", "tail_mask",
                   "int64_offsets"],
    "tunables": {"BLOCK": [256, 1024, 2048, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"max_pool2d_3x3s2_bf16": 0.346, "max_pool2d_3x3s2_fp16": 0.3495, "max_pool2d_3x3s2_fp32": 0.6232, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _max_pool_3x3s2_kernel(x_ptr, y_ptr, H, W, Ho, Wo, BLOCK: tl.constexpr):
    # axis 0: one (batch, channel) plane of NCHW x; axis 1: a BLOCK of that plane's output pixels,
    # flattened
    plane = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    out_ok = offs < Ho * Wo
    i = offs // Wo
    j = offs % Wo
    x_plane = x_ptr + plane * H * W
    # running max in fp32, starting at -inf
    acc = tl.full([BLOCK], float("-inf"), tl.float32)
    for dh in tl.static_range(3):
        # stride 2, padding 1: output (i, j) sees input rows 2i - 1 .. 2i + 1 and the same for
        # columns
        h = 2 * i - 1 + dh
        h_ok = out_ok & (h >= 0) & (h < H)
        for dw in tl.static_range(3):
            w = 2 * j - 1 + dw
            ok = h_ok & (w >= 0) & (w < W)
            # taps in the padding read -inf, so they never win the max
            v = tl.load(x_plane + h * W + w, mask=ok, other=float("-inf")).to(tl.float32)
            acc = tl.maximum(acc, v)
    tl.store(y_ptr + plane * Ho * Wo + offs, acc.to(y_ptr.dtype.element_ty), mask=out_ok)


def max_pool2d_3x3s2(x: torch.Tensor, BLOCK: int = 1024, num_warps: int = 4) -> torch.Tensor:
    assert x.dim() == 4
    x = x.contiguous()
    B, C, H, W = x.shape
    Ho, Wo = (H - 1) // 2 + 1, (W - 1) // 2 + 1
    y = torch.empty((B, C, Ho, Wo), dtype=x.dtype, device=x.device)
    block = min(BLOCK, triton.next_power_of_2(Ho * Wo))
    _max_pool_3x3s2_kernel[(B * C, triton.cdiv(Ho * Wo, block))](x, y, H, W, Ho, Wo, BLOCK=block,
                                                                 num_warps=num_warps)
    return y
