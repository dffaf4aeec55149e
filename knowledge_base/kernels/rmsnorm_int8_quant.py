"""RMSNorm + dynamic per-token int8 quantization in one kernel: the normalized row never leaves the chip.

Op: rstd = 1/sqrt(mean(x^2) + eps); h = (x * rstd) * w (fp32); s = max(amax |h|, 1e-10) / 127;
q = clamp(rint(h / s), -128, 127) int8; returns q [M, K] and s [M, 1].
Traffic: x read, w read (shared by all rows, L2-resident), q (1 byte) and s written: ~3 bytes per
bf16 element instead of the 2 + 2 + 2 + 1 of an unfused norm -> write -> read -> quantize chain.
Tiling: one program per row. Rows up to BLOCK_K elements (every shape here) take the single-pass
path: the row is loaded once into registers, sum of squares -> rstd -> h -> abs-max -> s -> q
without touching memory again. Longer rows fall back to three passes over BLOCK_K chunks
(sum of squares; abs-max of h; quantize), re-reading x (mostly from L2).
Numerics: fp32 throughout; rstd = 1 / sqrt computed with correctly rounded sqrt and division
(tl.math.sqrt_rn, tl.math.div_rn), h in the reference's multiplication order, IEEE division for
h / s, rint via the 1.5 * 2^23 magic number (ties to even), clamp before the int8 cast.
Tunables: BLOCK_K (4096-16384: the single-pass limit), num_warps (4-16).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "norm_quant_fusion",
    "category": "quantization",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["rmsnorm", "per_token_dynamic_quant", "kernel_fusion", "single_pass_in_registers",
                   "ieee_division", "round_half_even_magic_number", "clamp_before_cast", "fp32_accumulation",
                   "int64_offsets"],
    "tunables": {"BLOCK_K": [4096, 8192, 16384], "num_warps": [4, 8, 16]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"rmsnorm_int8_quant_bf16": 0.2021, "rmsnorm_int8_quant_fp16": 0.1982, "rmsnorm_int8_quant_fp32": 0.3134, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _quantize(h, scale):
    # IEEE round-to-nearest division, then rint by the 1.5 * 2**23 trick
    v = tl.math.div_rn(h, tl.zeros_like(h) + scale)
    v = (v + 12582912.0) - 12582912.0  # rint, ties to even
    return tl.minimum(tl.maximum(v, -128.0), 127.0).to(tl.int8)


@triton.jit
def _rmsnorm_int8_kernel(x_ptr, w_ptr, q_ptr, s_ptr, K, eps, stride_x, stride_q, BLOCK_K: tl.constexpr,
                         ONE_PASS: tl.constexpr):
    # one program per row, one scale per row
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    q_row = q_ptr + row * stride_q
    offs = tl.arange(0, BLOCK_K)
    if ONE_PASS:
        mask = offs < K
        x = tl.load(x_row + offs, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        # IEEE-rounded division and sqrt (not the approximate forms): int8 codes flip on tiny
        # differences in h, so h stays as close to the reference as fp32 allows
        ms = tl.math.div_rn(tl.sum(x * x, axis=0), K * 1.0) + eps
        rstd = tl.math.div_rn(1.0, tl.math.sqrt_rn(ms))
        h = (x * rstd) * w
        # the quantisation scale comes from the normalised h, not x: amax(h) / 127
        scale = tl.math.div_rn(tl.maximum(tl.max(tl.abs(h), axis=0), 1e-10), 127.0)
        tl.store(q_row + offs, _quantize(h, scale), mask=mask)
    else:
        # long row: three passes (sum of squares, amax of h, quantise), recomputing h each time
        acc = tl.zeros([BLOCK_K], tl.float32)
        for k0 in range(0, K, BLOCK_K):
            x = tl.load(x_row + k0 + offs, mask=(k0 + offs) < K, other=0.0).to(tl.float32)
            acc += x * x
        ms = tl.math.div_rn(tl.sum(acc, axis=0), K * 1.0) + eps
        rstd = tl.math.div_rn(1.0, tl.math.sqrt_rn(ms))
        amax = tl.zeros([BLOCK_K], tl.float32)
        for k0 in range(0, K, BLOCK_K):
            mask = (k0 + offs) < K
            x = tl.load(x_row + k0 + offs, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + k0 + offs, mask=mask, other=0.0).to(tl.float32)
            amax = tl.maximum(amax, tl.abs((x * rstd) * w))
        scale = tl.math.div_rn(tl.maximum(tl.max(amax, axis=0), 1e-10), 127.0)
        for k0 in range(0, K, BLOCK_K):
            mask = (k0 + offs) < K
            x = tl.load(x_row + k0 + offs, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + k0 + offs, mask=mask, other=0.0).to(tl.float32)
            tl.store(q_row + k0 + offs, _quantize((x * rstd) * w, scale), mask=mask)
    tl.store(s_ptr + row, scale)


EPS = 1e-5  # the task's eps (Llama-3 rms_norm_eps)


def rmsnorm_int8_quant(x: torch.Tensor, w: torch.Tensor, BLOCK_K: int = 8192,
                       num_warps: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    assert x.dim() == 2 and w.dim() == 1 and x.shape[1] == w.shape[0]
    x = x.contiguous()
    w = w.contiguous()
    M, K = x.shape
    q = torch.empty((M, K), dtype=torch.int8, device=x.device)
    s = torch.empty((M, 1), dtype=torch.float32, device=x.device)
    block = min(BLOCK_K, triton.next_power_of_2(K))
    _rmsnorm_int8_kernel[(M,)](x, w, q, s, K, EPS, x.stride(0), q.stride(0), BLOCK_K=block, ONE_PASS=K <= block,
                               num_warps=num_warps)
    return q, s
