"""Per-row temperature + log-softmax over a large vocabulary, split across programs per row.

Op: y = x / t[row]; lp = y - max(y) - log(sum exp(y - max(y))), lp in fp32 for any input dtype.
Traffic: read the logits once (M * V * elem) and the temperatures, write fp32 log-probs
(M * V * 4); pass 2 re-reads each chunk, an L2 hit for decode batches. Partials: M * S * 8 bytes.
Tiling: decode batches have 13-256 rows, too few for one program per row on 132 SMs, so each row
is split into S = cdiv(V, CHUNK) chunks, in two launches:
  1. grid (M, S): chunk max m_c and sum_c exp(y - m_c) of the tempered logits;
  2. grid (M, S): every program combines its row's S partials in the same fixed order
     (deterministic, no atomics) into (m, log Z), recomputes y for its chunk and writes
     y - m - log Z.
All math in fp32. The temperature divide is tl.div_rn, the correctly rounded IEEE quotient: the
GPU's default fp32 `/` is approximate (2 ulp), and in outlier rows |y| reaches ~4e4, where 2 ulp
(~0.008) is far more than the tolerance on the small log-probs next to the row max. Row offsets int64; the vocabulary tail is masked.
Tunables: CHUNK (power of two, 2048-16384), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "row_log_softmax",
    "category": "fusion",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["split_row_two_pass", "chunk_partials_combine", "deterministic_reduction", "no_atomics",
                   "per_row_scalar_broadcast", "fp32_accumulation", "int64_offsets", "tail_mask"],
    "tunables": {"CHUNK": [2048, 4096, 8192, 16384], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)", "temperature_log_softmax_bf16": 0.2986, "temperature_log_softmax_fp16": 0.3767, "temperature_log_softmax_fp32": 0.4438},
}


@triton.jit
def _temp_partials_kernel(x_ptr, t_ptr, pm_ptr, ps_ptr, V, S, CHUNK: tl.constexpr):
    # pass 1, axis 0: a row; axis 1: a CHUNK of the vocabulary. Splitting the row gives few, long
    # rows enough programs
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    t = tl.load(t_ptr + row)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    mask = cols < V
    x = tl.load(x_ptr + row * V + cols, mask=mask, other=0.0).to(tl.float32)
    # x / temperature with IEEE division, as torch divides; the chunk tail is -inf so it adds
    # nothing
    y = tl.where(mask, tl.div_rn(x, t), float("-inf"))
    m = tl.max(y, axis=0)
    s = tl.sum(tl.exp(y - m), axis=0)
    # per-chunk partials: the chunk's max and sum of exp(y - max), fp32
    tl.store(pm_ptr + row * S + chunk, m)
    tl.store(ps_ptr + row * S + chunk, s)


@triton.jit
def _temp_finish_kernel(x_ptr, t_ptr, pm_ptr, ps_ptr, out_ptr, V, S, CHUNK: tl.constexpr, BLOCK_S: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    parts = tl.arange(0, BLOCK_S)
    pmask = parts < S
    # pass 2: every program re-merges all of its row's partials (S is small), then writes its own
    # chunk
    pm = tl.load(pm_ptr + row * S + parts, mask=pmask, other=float("-inf"))
    ps = tl.load(ps_ptr + row * S + parts, mask=pmask, other=0.0)
    m = tl.max(pm, axis=0)
    # log-sum-exp merge: each chunk's sum rescaled to the row max
    z = tl.sum(tl.where(pmask, ps * tl.exp(pm - m), 0.0), axis=0)
    log_z = tl.log(z)

    t = tl.load(t_ptr + row)
    cols = chunk * CHUNK + tl.arange(0, CHUNK)
    mask = cols < V
    x = tl.load(x_ptr + row * V + cols, mask=mask, other=0.0).to(tl.float32)
    # log-softmax = (y - max) - log(sum), written in fp32; y is recomputed from x rather than
    # stored between passes
    tl.store(out_ptr + row * V + cols, (tl.div_rn(x, t) - m) - log_z, mask=mask)


def temperature_log_softmax(x: torch.Tensor, temperature: torch.Tensor, CHUNK: int = 4096,
                            num_warps: int = 4) -> torch.Tensor:
    assert x.dim() == 2 and temperature.shape == (x.shape[0],)
    x = x.contiguous()
    t = temperature.contiguous()
    M, V = x.shape
    chunk = min(CHUNK, triton.next_power_of_2(V))
    S = triton.cdiv(V, chunk)
    pm = torch.empty((M, S), dtype=torch.float32, device=x.device)
    ps = torch.empty((M, S), dtype=torch.float32, device=x.device)
    out = torch.empty((M, V), dtype=torch.float32, device=x.device)
    _temp_partials_kernel[(M, S)](x, t, pm, ps, V, S, CHUNK=chunk, num_warps=num_warps)
    _temp_finish_kernel[(M, S)](x, t, pm, ps, out, V, S, CHUNK=chunk, BLOCK_S=triton.next_power_of_2(S),
                                num_warps=num_warps)
    return out
