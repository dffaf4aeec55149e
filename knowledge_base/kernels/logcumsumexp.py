"""Stable row log-cumsum-exp: an associative scan over (running max, rescaled sum) pairs, plus a carry.

Op: y[i, j] = log(sum_{k <= j} exp(x[i, k])) over the last dimension of x[M, N].
Traffic: one read and one write of every element, 2 * M * N * elem. The tree scan costs two
exps per combine and ~log2(BLOCK_N) combines per element, so on an H200 the special-function
units, not HBM, can be the limit; a smaller BLOCK_N trades scan depth for loop trips.
Tiling: one program per row walks it left to right in BLOCK_N chunks (tail lanes load -inf with
sum 0 and are not stored). Every element starts as the pair (m, s) = (x, 1), meaning
exp(m) * s; pairs combine as m = max(m1, m2), s = s1 exp(m1 - m) + s2 exp(m2 - m), which is
associative, so tl.associative_scan gives each lane its prefix pair. The carry pair (all
earlier chunks) is folded into every lane the same way, y = m + log(s), and the last lane's
pair (masked lanes are the identity) becomes the next carry. Every exponent is <= 0, so nothing
overflows; a pair with m = -inf (only masked lanes) is forced to s = 0 so that -inf - -inf
never produces NaN. fp32 throughout.
Tunables: BLOCK_N (power of two, 256-4096), num_warps (4-8). (On the CPU interpreter a custom
combine runs element by element in Python: slow, hence small CPU shapes.)
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "scan",
    "category": "scan",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["one_program_per_row", "chunked_row_loop", "tail_mask", "associative_scan_tuple",
                   "online_logsumexp", "block_scan_plus_carry", "fp32_accumulation", "int64_offsets"],
    "tunables": {"BLOCK_N": [256, 512, 1024, 2048, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"logcumsumexp_bf16": 0.0167, "logcumsumexp_fp16": 0.0167, "logcumsumexp_fp32": 0.0328, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _lse_combine(m1, s1, m2, s2):
    # combine two log-sum-exp partials held as (max, sum of exp(x - max)): associative, and never
    # exponentiates above 0, so it cannot overflow; (-inf, 0) is the identity and must not turn
    # into NaN
    m = tl.maximum(m1, m2)
    s = s1 * tl.exp(m1 - m) + s2 * tl.exp(m2 - m)
    return m, tl.where(m == float("-inf"), 0.0, s)


@triton.jit
def _logcumsumexp_kernel(x_ptr, y_ptr, stride_x, stride_y, N, BLOCK_N: tl.constexpr):
    # one program per row; the row is scanned in BLOCK_N chunks, left to right
    row = tl.program_id(0)
    x_row = x_ptr + row.to(tl.int64) * stride_x
    y_row = y_ptr + row.to(tl.int64) * stride_y
    offs = tl.arange(0, BLOCK_N)
    # carry: the (max, sum) of everything before this chunk, the identity at first
    carry_m = float("-inf")
    carry_s = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
        # each element x starts as (x, 1): exp(x - x) = 1; masked lanes as (-inf, 0), the identity
        s0 = tl.where(mask, 1.0, 0.0)
        # in-chunk inclusive scan with the combine above, then fold in the carry
        pm, ps = tl.associative_scan((x, s0), 0, _lse_combine)
        m, s = _lse_combine(carry_m, carry_s, pm, ps)
        tl.store(y_row + cols, (m + tl.log(s)).to(y_ptr.dtype.element_ty), mask=mask)
        # masked lanes are (-inf, 0), the identity, so the last lane holds the prefix through
        # the whole chunk: the next carry
        last = offs == BLOCK_N - 1
        carry_m = tl.max(tl.where(last, m, float("-inf")), axis=0)
        carry_s = tl.sum(tl.where(last, s, 0.0), axis=0)


def logcumsumexp(x: torch.Tensor, BLOCK_N: int = 512, num_warps: int = 4) -> torch.Tensor:
    assert x.dim() == 2
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    block = min(BLOCK_N, triton.next_power_of_2(N))
    _logcumsumexp_kernel[(M,)](x, y, x.stride(0), y.stride(0), N, BLOCK_N=block, num_warps=num_warps)
    return y
