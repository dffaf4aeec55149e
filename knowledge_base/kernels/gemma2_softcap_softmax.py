"""Final-logit soft-capping + softmax over a large vocabulary, split across programs per row.

Op: c = 30 * tanh(x / 30); p = softmax(c) over the last dimension, p in fp32 for any input dtype.
Traffic: read the logits once (M * V * elem) and write fp32 probabilities (M * V * 4); the
second read of each chunk (pass 2) is an L2 hit for decode batches (32 x 256000 x 2 bytes = 16 MB)
and a DRAM re-read for very large M. The per-chunk statistics are tiny (M * S * 8 bytes).
Tiling: a decode batch has only 13-256 rows, too few to fill 132 SMs with one program per row, so
each row is split into S = cdiv(V, CHUNK) chunks and the softmax done in two launches:
  1. grid (M, S): each program caps its chunk and writes the chunk's max m_c and sum_c exp(c - m_c);
  2. grid (M, S): each program combines its row's S partials (a [BLOCK_S] vector load; the same
     fixed-order reduction in every program, so the result is deterministic), recomputes its chunk
     and writes exp(c - m) / Z.
No atomics. tanh is computed as sign(u) * (1 - e) / (1 + e), e = exp(-2|u|) (Triton's core language
has no tanh; this form cannot overflow). All math in fp32; row offsets int64.
Tunables: CHUNK (power of two, 2048-16384), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "row_softmax",
    "category": "fusion",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["split_row_two_pass", "chunk_partials_combine", "deterministic_reduction", "no_atomics",
                   "overflow_safe_tanh", "fp32_accumulation", "int64_offsets", "tail_mask"],
    "tunables": {"CHUNK": [2048, 4096, 8192, 16384], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"gemma2_softcap_softmax_bf16": 0.4156, "gemma2_softcap_softmax_fp16": 0.407, "gemma2_softcap_softmax_fp32": 0.3872, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}

CAP = 30.0


@triton.jit
def _softcap(x, cap):
    u = x / cap
    # tanh from exp(-2|u|) and the sign put back after: the exp never overflows
    e = tl.exp(-2.0 * tl.abs(u))
    t = (1.0 - e) / (1.0 + e)
    return cap * tl.where(u < 0, -t, t)


@triton.jit
def _softcap_partials_kernel(x_ptr, pm_ptr, ps_ptr, V, S, cap, CHUNK: tl.constexpr):
    # pass 1, axis 0: a row; axis 1: a CHUNK of the vocabulary. Splitting the row gives few, long
    # rows enough programs
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    mask = cols < V
    x = tl.load(x_ptr + row * V + cols, mask=mask, other=0.0).to(tl.float32)
    # capped logits; the chunk tail is -inf so it adds nothing to the sum
    c = tl.where(mask, _softcap(x, cap), float("-inf"))
    m = tl.max(c, axis=0)
    s = tl.sum(tl.exp(c - m), axis=0)
    # per-chunk partials: the chunk's max and sum of exp(c - max), fp32
    tl.store(pm_ptr + row * S + chunk, m)
    tl.store(ps_ptr + row * S + chunk, s)


@triton.jit
def _softcap_finish_kernel(x_ptr, pm_ptr, ps_ptr, p_ptr, V, S, cap, CHUNK: tl.constexpr, BLOCK_S: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    parts = tl.arange(0, BLOCK_S)
    pmask = parts < S
    # pass 2: every program re-merges all of its row's partials (S is small), then normalises its
    # own chunk
    pm = tl.load(pm_ptr + row * S + parts, mask=pmask, other=float("-inf"))
    ps = tl.load(ps_ptr + row * S + parts, mask=pmask, other=0.0)
    m = tl.max(pm, axis=0)
    # log-sum-exp merge: each chunk's sum rescaled to the row max
    z = tl.sum(tl.where(pmask, ps * tl.exp(pm - m), 0.0), axis=0)
    inv = 1.0 / z

    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    mask = cols < V
    x = tl.load(x_ptr + row * V + cols, mask=mask, other=0.0).to(tl.float32)
    # the softcap is recomputed from x rather than stored between passes; p is written in fp32
    p = tl.exp(_softcap(x, cap) - m) * inv
    tl.store(p_ptr + row * V + cols, p, mask=mask)


def gemma2_softcap_softmax(x: torch.Tensor, CHUNK: int = 4096, num_warps: int = 4) -> torch.Tensor:
    assert x.dim() == 2
    x = x.contiguous()
    M, V = x.shape
    chunk = min(CHUNK, triton.next_power_of_2(V))
    S = triton.cdiv(V, chunk)
    pm = torch.empty((M, S), dtype=torch.float32, device=x.device)
    ps = torch.empty((M, S), dtype=torch.float32, device=x.device)
    p = torch.empty((M, V), dtype=torch.float32, device=x.device)
    _softcap_partials_kernel[(M, S)](x, pm, ps, V, S, CAP, CHUNK=chunk, num_warps=num_warps)
    _softcap_finish_kernel[(M, S)](x, pm, ps, p, V, S, CAP, CHUNK=chunk, BLOCK_S=triton.next_power_of_2(S),
                                   num_warps=num_warps)
    return p
