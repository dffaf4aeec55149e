"""Residual add + RMSNorm with an fp32 residual stream, fused: one program per row.

Op: h = residual (fp32) + x (fp16/bf16), kept in fp32; out = h * rsqrt(mean(h^2) + eps) * w,
rounded to x's dtype. Returns (out, h).
Traffic: minimal is M * N * (2 * elem + 8) bytes (read x and the fp32 residual, write out and the
fp32 h) + w once. Unfused (add, then norm) reads h back: another 4 * M * N bytes.
Tiling: one program per row, BLOCK_N chunks with a masked tail. Pass 1 forms h, stores it and
accumulates h^2 in fp32; pass 2 recomputes h from x and residual (the row was just read, so these
are cache hits for rows up to ~16k) instead of reading back its own stores, then normalises.
Row offsets are int64 (M * N passes 2^31 for long prefills of wide models).
Tunables: BLOCK_N (power of two; the default covers a row in one chunk up to 8192), num_warps.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "fused_residual_norm",
    "category": "fusion",
    "dtypes": ["fp16", "bf16"],
    "techniques": ["one_program_per_row", "chunked_row_loop", "tail_mask", "fp32_accumulation",
                   "fused_residual_add", "fp32_residual_stream", "recompute_instead_of_reload", "int64_offsets"],
    "tunables": {"BLOCK_N": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"add_rmsnorm_fp32_residual_bf16": 0.8917, "add_rmsnorm_fp32_residual_fp16": 0.8684, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}

EPS = 1e-5


@triton.jit
def _add_rmsnorm_f32res_kernel(x_ptr, r_ptr, w_ptr, out_ptr, h_ptr, stride_x, stride_r, stride_o, stride_h, N, eps,
                               BLOCK_N: tl.constexpr):
    # one program per row; int64 row index before it meets a stride
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    r_row = r_ptr + row * stride_r
    o_row = out_ptr + row * stride_o
    h_row = h_ptr + row * stride_h
    offs = tl.arange(0, BLOCK_N)

    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        # the residual stream is fp32 (asserted on the host) and h = r + x stays fp32 when stored:
        # repeated residual adds do not lose bits to bf16 rounding
        r = tl.load(r_row + cols, mask=mask, other=0.0)
        h = r + x
        tl.store(h_row + cols, h, mask=mask)
        # per-lane fp32 sum of squares, reduced across lanes once after the loop
        acc += h * h
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)

    # second pass recomputes h = r + x (the same bits) instead of reading h back
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        r = tl.load(r_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(o_row + cols, ((r + x) * rstd * w).to(out_ptr.dtype.element_ty), mask=mask)


def add_rmsnorm_fp32_residual(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, BLOCK_N: int = 8192,
                              num_warps: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    assert x.dim() == 2 and x.shape == residual.shape and residual.dtype == torch.float32
    x = x.contiguous()
    residual = residual.contiguous()
    M, N = x.shape
    out = torch.empty_like(x)
    h = torch.empty_like(residual)
    block = min(BLOCK_N, triton.next_power_of_2(N))
    _add_rmsnorm_f32res_kernel[(M,)](x, residual, weight.contiguous(), out, h, x.stride(0), residual.stride(0),
                                     out.stride(0), h.stride(0), N, EPS, BLOCK_N=block, num_warps=num_warps)
    return out, h
