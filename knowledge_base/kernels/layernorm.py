"""LayerNorm with weight and bias, one program per row, two-pass statistics in fp32.

Op: y = (x - mean) / sqrt(var + eps) * w + b over the last dimension of x[M, N] (biased var).
Traffic: minimal is 2 * M * N * elem (+ w, b once). The row is read three times (mean,
variance, normalise); for hidden sizes up to ~16k the row is 8-32 KB and the second and third
reads come from L1/L2, so DRAM sees about one read.
Tiling: one program per row, BLOCK_N chunks (tail masked), fp32 accumulators per lane reduced
once per pass. The variance is the mean of (x - mean)^2, not E[x^2] - mean^2: hidden states have
a nonzero mean and the one-pass form loses digits to cancellation there.
Tunables: BLOCK_N (power of two; default covers the row in one chunk up to 8192), num_warps.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "row_normalization",
    "category": "normalization",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": [
        "one_program_per_row",
        "chunked_row_loop",
        "tail_mask",
        "fp32_accumulation",
        "two_pass_variance",
    ],
    "tunables": {"BLOCK_N": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"layernorm_bf16": 0.0334, "layernorm_fp16": 0.032, "layernorm_fp32": 0.0263, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}

EPS = 1e-5


@triton.jit
def _layernorm_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, stride_x, stride_y, N, eps, BLOCK_N: tl.constexpr
):
    # one program per row; the row offset is int64 (rows * stride can pass 2**31 elements)
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * stride_x
    y_row = y_ptr + row.to(tl.int64) * stride_y
    offs = tl.arange(0, BLOCK_N)

    # pass 1: the mean, accumulated per lane in fp32 (the tail loads 0 and adds nothing)
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N

    # pass 2: variance as the mean of (x - mean)**2, the two-pass form: no cancellation from
    # E[x**2] - mean**2 when |mean| >> std
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        # the tail loaded 0, so x - mean there is -mean: zero it explicitly
        d = tl.where(mask, x - mean, 0.0)
        acc += d * d
    # biased variance (divide by N), eps inside the square root, as torch does
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)

    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        # pass 3: normalise and apply the affine weight and bias in fp32, round once on the store
        y = (x - mean) * rstd * w + b
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def layernorm(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    BLOCK_N: int = 8192,
    num_warps: int = 8,
) -> torch.Tensor:
    assert x.dim() == 2
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    # power-of-two block no wider than the row; rows wider than BLOCK_N loop (the row is re-read
    # from L2 on passes 2 and 3)
    block = min(BLOCK_N, triton.next_power_of_2(N))
    _layernorm_kernel[(M,)](
        x,
        weight.contiguous(),
        bias.contiguous(),
        y,
        x.stride(0),
        y.stride(0),
        N,
        EPS,
        BLOCK_N=block,
        num_warps=num_warps,
    )
    return y
