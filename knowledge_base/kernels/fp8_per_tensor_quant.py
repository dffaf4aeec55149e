"""Static per-tensor fp8 e4m3 quantization: a flat elementwise kernel with exact e4m3 rounding.

Op: q = e4m3_rne(clamp(x / scale, -448, 448)), scale a 1-element fp32 tensor; q float8_e4m3fn.
Traffic: x read once (elem bytes), q written once (1 byte): purely bandwidth-bound.
Tiling: the tensor is treated as a flat array of M * K elements; each program handles BLOCK
contiguous elements (coalesced, vectorised loads and stores), offsets int64.
Numerics: IEEE division (tl.math.div_rn); clamp to +-448 (e4m3fn has no infinity); then rounding
onto the e4m3 grid in fp32: the quantum of v is 2^(max(e, -6) - 3) for e = the fp32 exponent of
v (3 mantissa bits; below 2^-6 the subnormal quantum 2^-9), v * 2^-(e-3) is exact, rounded to an
integer with the 1.5 * 2^23 magic number (ties to even), and scaled back exactly. The final
.to(float8e4nv) then converts an exactly representable value, so the result is the same on the
GPU (cvt.rn.satfinite) and on the CPU interpreter (whose own fp8 rounding is wrong on ties and on
mantissa carries). The scale is loaded once per program.
Tunables: BLOCK (1024-8192), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "activation_quant",
    "category": "quantization",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["static_per_tensor_quant", "fp8_e4m3", "exact_e4m3_rounding", "ieee_division",
                   "saturate_before_cast", "flat_elementwise", "int64_offsets"],
    "tunables": {"BLOCK": [1024, 2048, 4096, 8192], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"fp8_per_tensor_quant_bf16": 0.396, "fp8_per_tensor_quant_fp16": 0.3824, "fp8_per_tensor_quant_fp32": 0.5125, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _round_to_e4m3(v):
    """fp32 v with |v| <= 448 -> the nearest e4m3 value (ties to even), still as fp32."""
    bits = v.to(tl.int32, bitcast=True)
    # unbiased exponent of v, floored at -6 (e4m3's smallest normal exponent): below it the grid
    # spacing stays 2**-9, the subnormal step
    e = tl.maximum(((bits >> 23) & 0xFF) - 127, -6)
    quantum = ((e + 124) << 23).to(tl.float32, bitcast=True)  # 2^(e - 3)
    inv_quantum = ((130 - e) << 23).to(tl.float32, bitcast=True)  # 2^(3 - e)
    r = v * inv_quantum
    # rounded here in fp32, so the cast to fp8 afterwards is exact whatever rounding the hardware
    # conversion would use
    r = (r + 12582912.0) - 12582912.0  # rint, ties to even
    return r * quantum


@triton.jit
def _fp8_per_tensor_kernel(x_ptr, s_ptr, q_ptr, N, BLOCK: tl.constexpr):
    # flat 1-D sweep; the one scale (computed by the caller) is a scalar load per program
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N
    scale = tl.load(s_ptr)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    # IEEE round-to-nearest division (plain / on fp32 compiles to an approximate divide), so the
    # quantised values match torch's x / scale
    v = tl.math.div_rn(x, tl.zeros_like(x) + scale)
    # saturate to e4m3's finite range
    v = tl.minimum(tl.maximum(v, -448.0), 448.0)
    tl.store(q_ptr + offs, _round_to_e4m3(v).to(tl.float8e4nv), mask=mask)


def fp8_per_tensor_quant(x: torch.Tensor, scale: torch.Tensor, BLOCK: int = 4096, num_warps: int = 8) -> torch.Tensor:
    x = x.contiguous()
    q = torch.empty(x.shape, dtype=torch.float8_e4m3fn, device=x.device)
    N = x.numel()
    _fp8_per_tensor_kernel[(triton.cdiv(N, BLOCK),)](x, scale, q, N, BLOCK=BLOCK, num_warps=num_warps)
    return q
