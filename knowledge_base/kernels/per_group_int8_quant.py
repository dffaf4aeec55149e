"""Per-token-group (1 x 128) int8 quantization: each program quantizes GROUPS groups of one row.

Op: s[i, g] = max(amax over x[i, 128g : 128g + 128], 1e-10) / 127; q = clamp(rint(x / s), -128,
127) as int8; q [M, K], s [M, K / 128] fp32.
Traffic: x read once, q and s written once -- a group's amax is a 128-element reduction, so the
whole group stays in registers and nothing is read twice (unlike per-token scaling).
Tiling: program (row, group block) loads a [GROUPS, 128] tile (GROUPS groups side by side along
the row, contiguous in memory), reduces |x| along axis 1 for GROUPS scales, divides with IEEE
division (tl.math.div_rn), rounds half to even with the 1.5 * 2^23 magic number, clamps, casts,
and stores q and the GROUPS scales. The group-block tail is masked. Row offsets are int64.
Tunables: GROUPS per program (4-16; more groups = fewer, larger programs), num_warps (2-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "activation_quant",
    "category": "quantization",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["per_group_dynamic_quant", "single_pass_in_registers", "ieee_division",
                   "round_half_even_magic_number", "clamp_before_cast", "tail_mask", "int64_offsets"],
    "tunables": {"GROUPS": [4, 8, 16], "num_warps": [2, 4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"per_group_int8_quant_bf16": 0.3255, "per_group_int8_quant_fp16": 0.3266, "per_group_int8_quant_fp32": 0.4857, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _per_group_int8_kernel(x_ptr, q_ptr, s_ptr, NG, stride_x, stride_q, stride_s, GROUP: tl.constexpr,
                           GROUPS: tl.constexpr):
    # axis 0: a row of x; axis 1: GROUPS consecutive 128-wide groups of it, each with its own scale
    row = tl.program_id(0).to(tl.int64)
    groups = tl.program_id(1) * GROUPS + tl.arange(0, GROUPS)
    g_ok = groups < NG
    cols = groups[:, None] * GROUP + tl.arange(0, GROUP)[None, :]  # [GROUPS, GROUP]
    # K % 128 == 0 (asserted): only whole groups past NG are masked
    x = tl.load(x_ptr + row * stride_x + cols, mask=g_ok[:, None], other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=1)
    # symmetric scale amax / 127, IEEE-rounded division; the floor keeps an all-zero group from
    # dividing by 0
    scale = tl.math.div_rn(tl.maximum(amax, 1e-10), tl.zeros_like(amax) + 127.0)
    v = tl.math.div_rn(x, tl.zeros_like(x) + scale[:, None])
    v = (v + 12582912.0) - 12582912.0  # rint, ties to even
    # |v| <= 127 already; the clamp only guards the rounding at the edge
    q = tl.minimum(tl.maximum(v, -128.0), 127.0).to(tl.int8)
    tl.store(q_ptr + row * stride_q + cols, q, mask=g_ok[:, None])
    tl.store(s_ptr + row * stride_s + groups, scale, mask=g_ok)


def per_group_int8_quant(x: torch.Tensor, GROUPS: int = 8, num_warps: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    assert x.dim() == 2 and x.shape[1] % 128 == 0
    x = x.contiguous()
    M, K = x.shape
    NG = K // 128
    GROUPS = min(GROUPS, triton.next_power_of_2(NG))
    q = torch.empty((M, K), dtype=torch.int8, device=x.device)
    s = torch.empty((M, NG), dtype=torch.float32, device=x.device)
    _per_group_int8_kernel[(M, triton.cdiv(NG, GROUPS))](x, q, s, NG, x.stride(0), q.stride(0), s.stride(0),
                                                         GROUP=128, GROUPS=GROUPS, num_warps=num_warps)
    return q, s
