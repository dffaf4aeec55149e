"""1 x 128 block-scaled fp8 e4m3 activation quantization (DeepSeek-V3): groups held in registers.

Op: s[i, g] = max(amax over x[i, 128g : 128g + 128], 1e-10) / 448; q = e4m3_rne(clamp(x / s,
-448, 448)); q float8_e4m3fn [M, K], s fp32 [M, K / 128].
Traffic: x read once, q (1 byte per element) and s written once: each 128-element group is its
own reduction, so one pass suffices. Bandwidth-bound.
Tiling: program (row, group block) loads GROUPS groups of one row as a [GROUPS, 128] tile
(contiguous), reduces |x| per group, divides with IEEE division (tl.math.div_rn), clamps, rounds
onto the e4m3 grid in fp32 (quantum from the fp32 exponent, exact power-of-two scaling, rint via
the 1.5 * 2^23 magic number) and converts the exactly representable result to float8e4nv --
identical on the GPU and the CPU interpreter. Group-block tails are masked; row offsets int64.
Tunables: GROUPS per program (4-16), num_warps (2-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "activation_quant",
    "category": "quantization",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["per_group_dynamic_quant", "block_scaled_fp8", "fp8_e4m3", "exact_e4m3_rounding",
                   "ieee_division", "saturate_before_cast", "single_pass_in_registers", "int64_offsets"],
    "tunables": {"GROUPS": [4, 8, 16], "num_warps": [2, 4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"fp8_act_block_quant_bf16": 0.289, "fp8_act_block_quant_fp16": 0.2735, "fp8_act_block_quant_fp32": 0.4585, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
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
def _fp8_act_block_kernel(x_ptr, q_ptr, s_ptr, NG, stride_x, stride_q, stride_s, GROUP: tl.constexpr,
                          GROUPS: tl.constexpr):
    # axis 0: a row of x; axis 1: GROUPS consecutive 128-wide groups of that row, each with its own
    # scale (1 x 128 activation blocks)
    row = tl.program_id(0).to(tl.int64)
    groups = tl.program_id(1) * GROUPS + tl.arange(0, GROUPS)
    g_ok = groups < NG
    # a [GROUPS, 128] tile: one group per tile row. K % 128 == 0 (asserted), so only whole groups
    # past NG need masking
    cols = groups[:, None] * GROUP + tl.arange(0, GROUP)[None, :]
    x = tl.load(x_ptr + row * stride_x + cols, mask=g_ok[:, None], other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=1)
    # scale = amax / 448 (e4m3's largest finite value), IEEE-rounded division; the floor keeps an
    # all-zero group from dividing by 0
    scale = tl.math.div_rn(tl.maximum(amax, 1e-10), tl.zeros_like(amax) + 448.0)
    v = tl.math.div_rn(x, tl.zeros_like(x) + scale[:, None])
    # clamp: rounding in x / scale can land a hair past 448
    v = tl.minimum(tl.maximum(v, -448.0), 448.0)
    tl.store(q_ptr + row * stride_q + cols, _round_to_e4m3(v).to(tl.float8e4nv), mask=g_ok[:, None])
    tl.store(s_ptr + row * stride_s + groups, scale, mask=g_ok)


def fp8_act_block_quant(x: torch.Tensor, GROUPS: int = 8, num_warps: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    assert x.dim() == 2 and x.shape[1] % 128 == 0
    x = x.contiguous()
    M, K = x.shape
    NG = K // 128
    GROUPS = min(GROUPS, triton.next_power_of_2(NG))
    q = torch.empty((M, K), dtype=torch.float8_e4m3fn, device=x.device)
    s = torch.empty((M, NG), dtype=torch.float32, device=x.device)
    _fp8_act_block_kernel[(M, triton.cdiv(NG, GROUPS))](x, q, s, NG, x.stride(0), q.stride(0), s.stride(0),
                                                        GROUP=128, GROUPS=GROUPS, num_warps=num_warps)
    return q, s
