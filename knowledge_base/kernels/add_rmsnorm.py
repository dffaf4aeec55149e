"""Residual add + RMSNorm, fused: one program per row.

Op: h = x + residual (rounded to the dtype); out = h * rsqrt(mean(h^2) + eps) * w.
Returns (out, h).
Traffic: minimal is 4 * M * N * elem (read x and residual, write out and h) + w once -- the
unfused pair (add, then rmsnorm) moves 5 * M * N * elem, reading h back from DRAM.
Tiling: one program per row, BLOCK_N chunks (tail masked). Pass 1 forms h in fp32, rounds it to
the dtype (it IS the residual stream the next layer adds to), stores it, and accumulates the
fp32 square of the rounded value. Pass 2 recomputes h from x and residual (L1/L2 hits for
rows up to ~16k) rather than reading back its own stores, then normalises.
Tunables: BLOCK_N (power of two; default covers the row in one chunk up to 8192), num_warps.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "fused_residual_norm",
    "category": "fusion",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": [
        "one_program_per_row",
        "chunked_row_loop",
        "tail_mask",
        "fp32_accumulation",
        "fused_residual_add",
        "recompute_instead_of_reload",
    ],
    "tunables": {"BLOCK_N": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"add_rmsnorm_bf16": 0.8502, "add_rmsnorm_fp16": 0.8438, "add_rmsnorm_fp32": 0.9005, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}

EPS = 1e-5


@triton.jit
def _add_rmsnorm_kernel(
    x_ptr,
    r_ptr,
    w_ptr,
    out_ptr,
    h_ptr,
    stride_x,
    stride_r,
    stride_o,
    stride_h,
    N,
    eps,
    BLOCK_N: tl.constexpr,
):
    # one program per row; int64 row offsets
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    r_row = r_ptr + row * stride_r
    o_row = out_ptr + row * stride_o
    h_row = h_ptr + row * stride_h
    offs = tl.arange(0, BLOCK_N)
    # the residual sum is rounded to the activation dtype before it is normalised, as the unfused
    # torch code does (h = x + r in bf16/fp16), so both outputs match it bit for bit in rounding
    dtype = h_ptr.dtype.element_ty

    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_row + cols, mask=mask, other=0.0).to(tl.float32)
        # pass 1: write the new residual stream h and accumulate sum(h**2) in fp32 from the rounded
        # h
        h = (x + r).to(dtype)
        tl.store(h_row + cols, h, mask=mask)
        hf = h.to(tl.float32)
        acc += hf * hf
    # eps inside the root; mean over the true N
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)

    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_row + cols, mask=mask, other=0.0).to(tl.float32)
        # pass 2 recomputes h from x and r (cheaper than re-reading h, and the same rounding)
        hf = (x + r).to(dtype).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(o_row + cols, (hf * rstd * w).to(dtype), mask=mask)


def add_rmsnorm(
    x: torch.Tensor,
    residual: torch.Tensor,
    weight: torch.Tensor,
    BLOCK_N: int = 8192,
    num_warps: int = 8,
) -> tuple[torch.Tensor, torch.Tensor]:
    assert x.dim() == 2 and x.shape == residual.shape
    x = x.contiguous()
    residual = residual.contiguous()
    M, N = x.shape
    out = torch.empty_like(x)
    h = torch.empty_like(x)
    block = min(BLOCK_N, triton.next_power_of_2(N))
    _add_rmsnorm_kernel[(M,)](
        x,
        residual,
        weight.contiguous(),
        out,
        h,
        x.stride(0),
        residual.stride(0),
        out.stride(0),
        h.stride(0),
        N,
        EPS,
        BLOCK_N=block,
        num_warps=num_warps,
    )
    return out, h
