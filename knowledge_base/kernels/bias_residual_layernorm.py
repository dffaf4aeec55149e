"""Bias add + residual add + LayerNorm, fused: one program per row, row held in registers.

Op: s = x + bias + residual in fp32; h = s rounded to the dtype (the new residual stream);
out = (s - mean) / sqrt(var + eps) * w + b with the statistics of the fp32 s (not the rounded h,
whose one-ulp error would be amplified by the large row mean). Returns (out, h).
Traffic: minimal is 4 * M * N * elem (read x and residual, write out and h) + 3 vectors of N.
Unfused, PyTorch writes x + bias, reads it for + residual, writes h, reads h for the norm:
~8 * M * N * elem.
Tiling: one program per row. When the row fits one BLOCK_N tile (N <= 8192 with the default:
every hidden size in the task), it is loaded once and kept in registers: mean, then the centred
variance (two-pass in registers: no E[h^2] - mean^2 cancellation), then the normalised store.
Wider rows fall back to a chunked three-pass loop that recomputes h from the inputs (cache hits).
Row offsets are int64.
Tunables: BLOCK_N (power of two >= N for the one-tile path), num_warps (4-16; 8 for N ~ 4-8k).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "fused_residual_norm",
    "category": "fusion",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["one_program_per_row", "row_in_registers", "two_pass_variance", "chunked_row_fallback",
                   "tail_mask", "fp32_accumulation", "fused_bias_residual_add", "int64_offsets"],
    "tunables": {"BLOCK_N": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"bias_residual_layernorm_bf16": 0.3849, "bias_residual_layernorm_fp16": 0.4145, "bias_residual_layernorm_fp32": 0.4663, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}

EPS = 1e-5


# h = x + bias + residual, in fp32
@triton.jit
def _residual(x_row, r_row, bias_ptr, cols, mask):
    x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
    bb = tl.load(bias_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_row + cols, mask=mask, other=0.0).to(tl.float32)
    return x + bb + r


@triton.jit
def _bias_residual_ln_kernel(x_ptr, bias_ptr, r_ptr, w_ptr, b_ptr, out_ptr, h_ptr, stride_x, stride_r, stride_o,
                             stride_h, N, eps, BLOCK_N: tl.constexpr, ONE_TILE: tl.constexpr):
    # one program per row; int64 row index
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    r_row = r_ptr + row * stride_r
    o_row = out_ptr + row * stride_o
    h_row = h_ptr + row * stride_h
    offs = tl.arange(0, BLOCK_N)
    dtype = h_ptr.dtype.element_ty

    # the row fits in one block: load it once and keep it in registers for the mean, the variance
    # and the output
    if ONE_TILE:
        mask = offs < N
        hf = _residual(x_row, r_row, bias_ptr, offs, mask)
        tl.store(h_row + offs, hf.to(dtype), mask=mask)
        mean = tl.sum(hf, axis=0) / N
        # masked lanes would add (0 - mean)**2 to the variance: zero them
        d = tl.where(mask, hf - mean, 0.0)
        # two-pass variance (mean first, then squared deviations) rather than E[h^2] - E[h]^2,
        # which cancels badly
        rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / N + eps)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(o_row + offs, (d * rstd * w + b).to(dtype), mask=mask)
    # a long row: three passes (mean, variance, output), recomputing h from x, bias and residual
    # each time instead of re-reading it
    else:
        acc = tl.zeros([BLOCK_N], tl.float32)
        for start in range(0, N, BLOCK_N):
            cols = start + offs
            mask = cols < N
            hf = _residual(x_row, r_row, bias_ptr, cols, mask)
            tl.store(h_row + cols, hf.to(dtype), mask=mask)
            acc += hf
        mean = tl.sum(acc, axis=0) / N
        acc = tl.zeros([BLOCK_N], tl.float32)
        for start in range(0, N, BLOCK_N):
            cols = start + offs
            mask = cols < N
            hf = _residual(x_row, r_row, bias_ptr, cols, mask)
            d = tl.where(mask, hf - mean, 0.0)
            acc += d * d
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
        for start in range(0, N, BLOCK_N):
            cols = start + offs
            mask = cols < N
            hf = _residual(x_row, r_row, bias_ptr, cols, mask)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
            b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
            tl.store(o_row + cols, ((hf - mean) * rstd * w + b).to(dtype), mask=mask)


def bias_residual_layernorm(x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                            ln_bias: torch.Tensor, BLOCK_N: int = 8192,
                            num_warps: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    assert x.dim() == 2 and x.shape == residual.shape
    x = x.contiguous()
    residual = residual.contiguous()
    M, N = x.shape
    out = torch.empty_like(x)
    h = torch.empty_like(x)
    block = min(BLOCK_N, triton.next_power_of_2(N))
    _bias_residual_ln_kernel[(M,)](x, bias.contiguous(), residual, weight.contiguous(), ln_bias.contiguous(), out, h,
                                   x.stride(0), residual.stride(0), out.stride(0), h.stride(0), N, EPS,
                                   BLOCK_N=block, ONE_TILE=N <= block, num_warps=num_warps)
    return out, h
