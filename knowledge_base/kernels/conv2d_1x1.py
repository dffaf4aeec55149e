"""1x1 conv2d on NCHW as one GEMM per image, Y_b[Cout, HW] = W[Cout, Cin] @ X_b[Cin, HW], on tensor cores.

Op: y[b, o, p] = sum_c w[o, c] x[b, c, p] over the pixels p of each image; no bias.
GEMM view: per image M = Cout, N = H * W, K = Cin (the weight is shared by all images); FLOPs
2 B Cout HW Cin. Compute-bound for the ResNet training shapes; minimal traffic x + w + y once.
Tiling: grid (image b, tile of Y_b); tiles are BLOCK_M output channels x BLOCK_N pixels with an
fp32 accumulator, walking Cin in BLOCK_K steps. Both operands are row-major in NCHW already: the
weight tile [BLOCK_M, BLOCK_K] is contiguous along Cin, the activation tile [BLOCK_K, BLOCK_N]
along pixels, and the output tile goes back to NCHW contiguous along pixels -- no transposes, no
channels-last copy. Tiles within an image are taken in groups of GROUP_M channel-rows so that
neighbouring programs share activation columns in L2. fp32 uses input_precision="ieee".
ResNet's 7x7 = 49-pixel maps waste most of a 64-wide pixel tile; BLOCK_N = 32 or folding images
into N (a channels-last layout) would fix that. Offsets int64. bf16 tl.dot is wrong on the CPU
interpreter only.
Tunables: BLOCK_M (64-128), BLOCK_N (32-128), BLOCK_K (32-64), GROUP_M (4-8), num_warps, num_stages.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "conv2d_pointwise_gemm",
    "category": "convolution",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["batched_gemm_shared_weight", "nchw_native_operands", "grouped_tile_order", "fp32_accumulator",
                   "ieee_fp32_dot", "k_tail_mask", "edge_masks", "int64_offsets"],
    "tunables": {"BLOCK_M": [64, 128], "BLOCK_N": [32, 64, 128], "BLOCK_K": [32, 64], "GROUP_M": [4, 8],
                 "num_warps": [4, 8], "num_stages": [2, 3, 4]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"conv2d_1x1_bf16": 0.1935, "conv2d_1x1_fp16": 0.1895, "conv2d_1x1_fp32": 0.5589, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _conv1x1_kernel(x_ptr, w_ptr, y_ptr, Cin, Cout, HW, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, IEEE_FP32: tl.constexpr):
    # a 1x1 convolution is a GEMM per image: y[img] (Cout x HW) = w (Cout x Cin) @ x[img] (Cin x
    # HW), with NCHW already in the right layout (no transpose). Axis 0: the image; axis 1: a tile
    # of that GEMM in grouped order
    img = tl.program_id(0).to(tl.int64)
    pid = tl.program_id(1)
    tiles_m = tl.cdiv(Cout, BLOCK_M)
    tiles_n = tl.cdiv(HW, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_in_group = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % rows_in_group
    pid_n = (pid % per_group) // rows_in_group

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # edge masks: output channels and pixels
    m_ok = offs_m < Cout
    n_ok = offs_n < HW
    x_img = x_ptr + img * Cin * HW
    # fp32 accumulator
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, Cin, BLOCK_K):
        ks = k0 + offs_k
        # input-channel tail zero-filled on both operands
        k_ok = ks < Cin
        a = tl.load(w_ptr + offs_m[:, None].to(tl.int64) * Cin + ks[None, :], mask=m_ok[:, None] & k_ok[None, :],
                    other=0.0)
        b = tl.load(x_img + ks[:, None].to(tl.int64) * HW + offs_n[None, :], mask=k_ok[:, None] & n_ok[None, :],
                    other=0.0)
        if IEEE_FP32:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
    y_offs = img * Cout * HW + offs_m[:, None].to(tl.int64) * HW + offs_n[None, :]
    tl.store(y_ptr + y_offs, acc.to(y_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def conv2d_1x1(x: torch.Tensor, weight: torch.Tensor, BLOCK_M: int = 128, BLOCK_N: int = 64, BLOCK_K: int = 32,
               GROUP_M: int = 8, num_warps: int = 4, num_stages: int = 3) -> torch.Tensor:
    assert x.dim() == 4 and weight.shape[2:] == (1, 1) and weight.shape[1] == x.shape[1]
    x = x.contiguous()
    B, Cin, H, W = x.shape
    Cout = weight.shape[0]
    w2 = weight.reshape(Cout, Cin).contiguous()
    HW = H * W
    y = torch.empty((B, Cout, H, W), dtype=x.dtype, device=x.device)
    # tl.dot's minimum tile is 16; no larger than the dimensions need
    block_m = min(BLOCK_M, max(16, triton.next_power_of_2(Cout)))
    block_n = min(BLOCK_N, max(16, triton.next_power_of_2(HW)))
    block_k = min(BLOCK_K, max(16, triton.next_power_of_2(Cin)))
    grid = (B, triton.cdiv(Cout, block_m) * triton.cdiv(HW, block_n))
    _conv1x1_kernel[grid](x, w2, y, Cin, Cout, HW, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
                          GROUP_M=GROUP_M, IEEE_FP32=x.dtype == torch.float32, num_warps=num_warps,
                          num_stages=num_stages)
    return y
