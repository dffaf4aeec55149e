"""128 x 128 block-scaled fp8 e4m3 weight quantization (DeepSeek-V3): one program per block.

Op: s[bn, bk] = max(amax over the (clipped) 128 x 128 block, 1e-10) / 448;
q = e4m3_rne(clamp(w / s, -448, 448)); q float8_e4m3fn [N, K], s fp32 [ceil(N/128), ceil(K/128)].
Traffic: w read once, q written once (1 byte per element), one scale per block: bandwidth-bound.
Tiling: program (bn, bk) loads its 128 x 128 block as one tile (rows of 128 contiguous elements,
256 bytes in bf16: coalesced), masking rows >= N and columns >= K with zeros (which cannot raise
an abs-max), reduces |w| over the whole tile, then quantizes the tile in registers: IEEE division
(tl.math.div_rn), clamp, exact rounding onto the e4m3 grid in fp32 (quantum from the fp32
exponent, power-of-two scaling, rint by the 1.5 * 2^23 magic number), conversion of the exact
value to float8e4nv (same result on the GPU and the CPU interpreter). Block offsets are int64.
A 128 x 128 fp32 tile is 64 KB of registers per program: 8 warps keep it at 64 registers/thread.
Tunables: num_warps (4-16).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "weight_quant",
    "category": "quantization",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["block_scaled_fp8", "fp8_e4m3", "exact_e4m3_rounding", "ieee_division", "saturate_before_cast",
                   "one_program_per_block", "edge_masks", "int64_offsets"],
    "tunables": {"num_warps": [4, 8, 16]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"fp8_weight_block_quant_bf16": 0.4655, "fp8_weight_block_quant_fp16": 0.4705, "fp8_weight_block_quant_fp32": 0.7045, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
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
def _fp8_weight_block_kernel(w_ptr, q_ptr, s_ptr, N, K, stride_w, stride_q, stride_s, BLOCK: tl.constexpr):
    # one program per 128 x 128 block of the weight [N, K], each block with its own scale
    # (DeepSeek-style block quantisation)
    bn = tl.program_id(0)
    bk = tl.program_id(1)
    rows = bn * BLOCK + tl.arange(0, BLOCK)
    cols = bk * BLOCK + tl.arange(0, BLOCK)
    # edge blocks may hang past N or K: their outside reads 0, which never raises amax
    mask = (rows < N)[:, None] & (cols < K)[None, :]
    w = tl.load(w_ptr + rows[:, None].to(tl.int64) * stride_w + cols[None, :], mask=mask, other=0.0)
    w = w.to(tl.float32)
    amax = tl.max(tl.max(tl.abs(w), axis=1), axis=0)
    # scale = block amax / 448 (e4m3's largest finite value), IEEE-rounded; floored so an all-zero
    # block stays finite
    scale = tl.math.div_rn(tl.maximum(amax, 1e-10), 448.0)
    v = tl.math.div_rn(w, tl.zeros_like(w) + scale)
    v = tl.minimum(tl.maximum(v, -448.0), 448.0)
    tl.store(q_ptr + rows[:, None].to(tl.int64) * stride_q + cols[None, :], _round_to_e4m3(v).to(tl.float8e4nv),
             mask=mask)
    tl.store(s_ptr + bn * stride_s + bk, scale)


def fp8_weight_block_quant(w: torch.Tensor, num_warps: int = 8) -> tuple[torch.Tensor, torch.Tensor]:
    assert w.dim() == 2
    w = w.contiguous()
    N, K = w.shape
    nb, kb = triton.cdiv(N, 128), triton.cdiv(K, 128)
    q = torch.empty((N, K), dtype=torch.float8_e4m3fn, device=w.device)
    s = torch.empty((nb, kb), dtype=torch.float32, device=w.device)
    _fp8_weight_block_kernel[(nb, kb)](w, q, s, N, K, w.stride(0), q.stride(0), s.stride(0), BLOCK=128,
                                       num_warps=num_warps)
    return q, s
