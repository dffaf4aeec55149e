"""3x3 stride-1 pad-1 conv2d with bias on NCHW as an implicit GEMM on tensor cores (no im2col buffer).

Op: y[b, o, i, j] = bias[o] + sum_{c, dh, dw} w[o, c, dh, dw] x[b, c, i + dh - 1, j + dw - 1].
GEMM view: M = B * H * W output pixels, N = Cout, K = 9 * Cin; FLOPs 2 M N K. Compute-bound for
the SD-UNet and ResNet training shapes; minimal traffic is x + w + y once.
Tiling: each program owns BLOCK_M pixels x BLOCK_N output channels with an fp32 accumulator. The
K loop runs over the nine taps (unrolled) and, inside each, over Cin in BLOCK_K chunks: the A
tile [BLOCK_M, BLOCK_K] is gathered straight from NCHW x (for a fixed channel, consecutive
pixels are consecutive addresses, so the loads coalesce along M; taps that fall off the map
are masked to 0 -- the zero padding, never materialised); the B tile [BLOCK_K, BLOCK_N] comes
from the weight re-laid out once by the wrapper as [3, 3, Cin, Cout] (a 3 MB copy at most), so
it is contiguous along N. tl.dot accumulates (input_precision="ieee" for fp32: TF32 would change
the answer). The epilogue adds the bias and stores the tile back into NCHW y, coalesced along the
pixel axis. Pixel offsets are int64. bf16 tl.dot is wrong on the CPU interpreter only.
Tunables: BLOCK_M (64-128), BLOCK_N (32-128), BLOCK_K (16-64), num_warps (4-8), num_stages (2-4).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "conv2d_implicit_gemm",
    "category": "convolution",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["implicit_gemm", "nchw_gather_coalesced_along_pixels", "weight_relayout_khkwcico",
                   "implicit_zero_padding", "fp32_accumulator", "fused_bias_epilogue", "ieee_fp32_dot",
                   "tail_mask", "int64_offsets"],
    "tunables": {"BLOCK_M": [64, 128], "BLOCK_N": [32, 64, 128], "BLOCK_K": [16, 32, 64], "num_warps": [4, 8],
                 "num_stages": [2, 3, 4]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"conv2d_3x3_bf16": 0.1468, "conv2d_3x3_fp16": 0.1432, "conv2d_3x3_fp32": 0.3652, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _conv3x3_kernel(x_ptr, w_ptr, b_ptr, y_ptr, B, Cin, Cout, H, W, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    BLOCK_K: tl.constexpr, IEEE_FP32: tl.constexpr):
    # implicit GEMM: M = output pixels (B * H * W), N = output channels, K = 9 taps x Cin. No
    # im2col buffer: each A tile is gathered straight from x
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    HW = H * W
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    m_ok = offs_m < B * HW
    n_ok = offs_n < Cout
    # decompose the flat pixel index into (image, row, column); int64 because B * Cin * H * W can
    # pass 2**31
    m64 = offs_m.to(tl.int64)
    img = m64 // HW
    pix = m64 % HW
    oh = pix // W
    ow = pix % W
    x_img = img * Cin * HW  # element offset of each pixel's image

    # fp32 accumulator
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    # the 3x3 taps, unrolled at compile time: each shifts the pixel grid by (-1..1, -1..1)
    for tap in tl.static_range(9):
        ih = oh + (tap // 3 - 1)
        iw = ow + (tap % 3 - 1)
        # padding=1: taps that fall off the image read 0 (the mask is the zero padding, nothing is
        # materialised)
        pix_ok = m_ok & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        a_base = x_img + ih * W + iw
        for c0 in range(0, Cin, BLOCK_K):
            cs = c0 + offs_k
            c_ok = cs < Cin
            # x is NCHW: a [pixels, channels] tile with channel stride H*W (strided, but each
            # column of the tile is contiguous along W)
            a = tl.load(x_ptr + a_base[:, None] + cs[None, :].to(tl.int64) * HW,
                        mask=pix_ok[:, None] & c_ok[None, :], other=0.0)
            # weights pre-permuted to [3, 3, Cin, Cout], so a [channels, BLOCK_N] tile is
            # contiguous along Cout
            w_rows = (tap * Cin + cs).to(tl.int64) * Cout
            b = tl.load(w_ptr + w_rows[:, None] + offs_n[None, :], mask=c_ok[:, None] & n_ok[None, :], other=0.0)
            if IEEE_FP32:
                acc = tl.dot(a, b, acc, input_precision="ieee")
            else:
                acc = tl.dot(a, b, acc)

    # bias added in fp32 before the single rounding
    acc += tl.load(b_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)[None, :]
    # write NCHW: output channel stride H*W
    y_offs = (img * Cout * HW + pix)[:, None] + offs_n[None, :].to(tl.int64) * HW
    tl.store(y_ptr + y_offs, acc.to(y_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def conv2d_3x3(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, BLOCK_M: int = 128, BLOCK_N: int = 64,
               BLOCK_K: int = 32, num_warps: int = 4, num_stages: int = 3) -> torch.Tensor:
    assert x.dim() == 4 and weight.shape[2:] == (3, 3) and weight.shape[1] == x.shape[1]
    x = x.contiguous()
    B, Cin, H, W = x.shape
    Cout = weight.shape[0]
    w_t = weight.permute(2, 3, 1, 0).contiguous()  # [3, 3, Cin, Cout]: contiguous along Cout
    bias = bias.contiguous()
    y = torch.empty((B, Cout, H, W), dtype=x.dtype, device=x.device)
    # tl.dot needs tiles of at least 16; no wider than the channel counts need
    block_n = min(BLOCK_N, max(16, triton.next_power_of_2(Cout)))
    block_k = min(BLOCK_K, max(16, triton.next_power_of_2(Cin)))
    grid = (triton.cdiv(B * H * W, BLOCK_M), triton.cdiv(Cout, block_n))
    _conv3x3_kernel[grid](x, w_t, bias, y, B, Cin, Cout, H, W, BLOCK_M=BLOCK_M, BLOCK_N=block_n, BLOCK_K=block_k,
                          IEEE_FP32=x.dtype == torch.float32, num_warps=num_warps, num_stages=num_stages)
    return y


def causal_conv1d_silu(x, weight, bias, BLOCK_M=128, BLOCK_N=64, BLOCK_K=32, num_warps=4, num_stages=3):
    """The task's entry point, delegating to the reference launcher conv2d_3x3."""
    return conv2d_3x3(x, weight, bias, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=num_warps, num_stages=num_stages)
