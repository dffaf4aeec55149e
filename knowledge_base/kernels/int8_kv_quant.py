"""int8 KV quantization with per-(token, head) scales: ROWS head-rows of k and v per program.

Op: for k and v [T, HKV, D] separately: s[t, h] = max(amax_d |x[t, h, :]|, 1e-10) / 127;
q = clamp(rint(x / s), -128, 127) int8; returns (k_q, k_s, v_q, v_s).
Traffic: k and v read once, the int8 copies and fp32 scales written once: bandwidth-bound.
Tiling: the [T, HKV, D] tensors are seen as T * HKV contiguous rows of D (D = 128: 256 bytes in
bf16). A program takes ROWS rows of k and the same rows of v as two [ROWS, D] tiles, reduces
|x| per row, divides with IEEE division (tl.math.div_rn), rounds half to even with the 1.5 * 2^23
magic number, clamps, casts, and stores both tensors and their scales. One launch for k and v.
Offsets are int64; the row tail is masked.
Tunables: ROWS (8-64), num_warps (2-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "kv_cache_quant",
    "category": "quantization",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["per_head_dynamic_quant", "rows_per_program", "kv_in_one_launch", "ieee_division",
                   "round_half_even_magic_number", "clamp_before_cast", "tail_mask", "int64_offsets"],
    "tunables": {"ROWS": [8, 16, 32, 64], "num_warps": [2, 4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"int8_kv_quant_bf16": 0.155, "int8_kv_quant_fp16": 0.1618, "int8_kv_quant_fp32": 0.0704, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _quant_rows(x_ptr, q_ptr, s_ptr, rows, row_ok, D: tl.constexpr):
    # a [ROWS, D] tile of (token, head) rows; D is a power of two (asserted), so only whole rows
    # are masked
    offs = rows[:, None].to(tl.int64) * D + tl.arange(0, D)[None, :]
    x = tl.load(x_ptr + offs, mask=row_ok[:, None], other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=1)
    # symmetric per-row scale amax / 127, IEEE-rounded division; the floor keeps an all-zero row
    # from dividing by 0
    scale = tl.math.div_rn(tl.maximum(amax, 1e-10), tl.zeros_like(amax) + 127.0)
    v = tl.math.div_rn(x, tl.zeros_like(x) + scale[:, None])
    v = (v + 12582912.0) - 12582912.0  # rint, ties to even
    # |v| <= 127 already; the clamp only guards rounding at the edge
    tl.store(q_ptr + offs, tl.minimum(tl.maximum(v, -128.0), 127.0).to(tl.int8), mask=row_ok[:, None])
    tl.store(s_ptr + rows, scale, mask=row_ok)


@triton.jit
def _kv_quant_kernel(k_ptr, v_ptr, kq_ptr, ks_ptr, vq_ptr, vs_ptr, R, D: tl.constexpr, ROWS: tl.constexpr):
    # ROWS (token, head) rows per program; K and V are quantised in the same launch
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < R
    _quant_rows(k_ptr, kq_ptr, ks_ptr, rows, row_ok, D)
    _quant_rows(v_ptr, vq_ptr, vs_ptr, rows, row_ok, D)


def int8_kv_quant(k: torch.Tensor, v: torch.Tensor, ROWS: int = 16,
                  num_warps: int = 4) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    assert k.dim() == 3 and k.shape == v.shape
    T, HKV, D = k.shape
    assert D == triton.next_power_of_2(D), "head_dim must be a power of two"
    k, v = k.contiguous(), v.contiguous()
    R = T * HKV
    k_q = torch.empty((T, HKV, D), dtype=torch.int8, device=k.device)
    v_q = torch.empty((T, HKV, D), dtype=torch.int8, device=k.device)
    k_s = torch.empty((T, HKV), dtype=torch.float32, device=k.device)
    v_s = torch.empty((T, HKV), dtype=torch.float32, device=k.device)
    _kv_quant_kernel[(triton.cdiv(R, ROWS),)](k, v, k_q, k_s, v_q, v_s, R, D=D, ROWS=ROWS, num_warps=num_warps)
    return k_q, k_s, v_q, v_s
