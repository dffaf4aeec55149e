"""Causal flash-attention forward with GQA: online softmax over key tiles, no S x S matrix.

Op: o = softmax(q k^T / sqrt(D), causal) v per (batch, head), query head h reading KV head
h // (H / HKV); q [B, H, S, D], k/v [B, HKV, S, D], o like q.
Traffic: q, k, v read and o written once in the ideal (k/v are re-read per query tile from L2);
FLOPs 4 * D per causal (i, j) pair: compute-bound at S >= 1k.
Tiling: program (query tile, b * H + h) holds q [BLOCK_M, D] and an fp32 accumulator
[BLOCK_M, D]; it walks key tiles of BLOCK_N with the online-softmax recurrence in base 2
(scores pre-multiplied by scale * log2(e), running max m, running sum l, accumulator rescaled by
exp2(m_old - m_new)). Causality: key tiles entirely below the diagonal run unmasked (phase 1,
keys < start of the query tile); the tiles that cross the diagonal (phase 2) mask j > i and the
key tail; tiles above the diagonal are never visited, so the kernel does the causal half of the
work. p is cast to v's dtype for the P V tensor-core product (fp32 stays IEEE fp32).
Every query row sees key 0, so m is finite after the first tile and no row divides by zero.
Offsets are int64 per (b, h) base. bf16 is checked on GPU only.
Tunables: BLOCK_M (64-128), BLOCK_N (32-64; BLOCK_M % BLOCK_N == 0), num_warps (4-8),
num_stages (2-3). fp32 needs smaller tiles (registers): 32 x 32.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "attention",
    "category": "attention",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["flash_attention", "online_softmax", "exp2_softmax", "causal_tile_skipping",
                   "diagonal_tile_mask", "gqa_head_mapping", "fp32_accumulator", "int64_offsets"],
    "tunables": {"BLOCK_M": [32, 64, 128], "BLOCK_N": [32, 64], "num_warps": [4, 8], "num_stages": [2, 3]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"attn_causal_prefill_bf16": 0.5016, "attn_causal_prefill_fp16": 0.5117, "attn_causal_prefill_fp32": 0.1607, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _attn_tile(acc, m_i, l_i, q, k_ptrs, v_ptrs, offs_m, offs_n, start_n, S, qk_scale, stride_ks, stride_vs,
               MASK: tl.constexpr, IEEE_FP32: tl.constexpr):
    keys = start_n + offs_n
    # keys past the sequence end are loaded as 0 and masked to -inf below, so they get zero weight
    kv_ok = keys < S
    k = tl.load(k_ptrs + start_n * stride_ks, mask=kv_ok[:, None], other=0.0)
    v = tl.load(v_ptrs + start_n * stride_vs, mask=kv_ok[:, None], other=0.0)
    if IEEE_FP32:
        s = tl.dot(q, tl.trans(k), input_precision="ieee")
    else:
        s = tl.dot(q, tl.trans(k))
    # qk_scale folds log2(e) into 1/sqrt(D): the softmax below uses exp2, which is cheaper than exp
    s = s * qk_scale
    # only the diagonal block needs the causal test (key <= query) and the tail test; blocks wholly
    # below the diagonal skip it (MASK=False)
    if MASK:
        s = tl.where((keys[None, :] <= offs_m[:, None]) & kv_ok[None, :], s, float("-inf"))
    # online softmax: keep a running row max m_i and running sum l_i; when the max grows, rescale
    # the old sum and accumulator by alpha = 2**(m_old - m_new), so nothing is ever exp'd above
    # 2**0 and no second pass over the keys is needed
    m_new = tl.maximum(m_i, tl.max(s, axis=1))
    alpha = tl.exp2(m_i - m_new)
    p = tl.exp2(s - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, axis=1)
    # the output accumulator (sum of p @ v so far, fp32) is rescaled with the same alpha
    acc = acc * alpha[:, None]
    # p is cast to v's dtype for the tensor-core dot (fp16/bf16); fp32 stays IEEE
    if IEEE_FP32:
        acc = tl.dot(p, v, acc, input_precision="ieee")
    else:
        acc = tl.dot(p.to(v.dtype), v, acc)
    return acc, m_new, l_i


@triton.jit
def _attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, S, H, HKV, qk_scale, stride_qb, stride_qh, stride_qs, stride_kb,
                     stride_kh, stride_ks, stride_vb, stride_vh, stride_vs, stride_ob, stride_oh, stride_os,
                     D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, IEEE_FP32: tl.constexpr):
    # axis 0: a BLOCK_M tile of queries; axis 1: one (batch, head) pair
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = bh % H
    # grouped-query attention: H // HKV query heads share one KV head
    kvh = (h // (H // HKV)).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    q_ptrs = q_ptr + b * stride_qb + h.to(tl.int64) * stride_qh + offs_m[:, None] * stride_qs + offs_d[None, :]
    k_ptrs = k_ptr + b * stride_kb + kvh * stride_kh + offs_n[:, None] * stride_ks + offs_d[None, :]
    v_ptrs = v_ptr + b * stride_vb + kvh * stride_vh + offs_n[:, None] * stride_vs + offs_d[None, :]
    # the query tile is loaded once and stays in registers for the whole key loop; rows past S read
    # 0 and are never stored
    q = tl.load(q_ptrs, mask=(offs_m < S)[:, None], other=0.0)

    # running max starts at -inf, running sum and accumulator at 0 (all fp32)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D], tl.float32)
    lo = pid_m * BLOCK_M  # keys below lo are visible to every query of this tile
    for start_n in range(0, lo, BLOCK_N):
        acc, m_i, l_i = _attn_tile(acc, m_i, l_i, q, k_ptrs, v_ptrs, offs_m, offs_n, start_n, S, qk_scale,
                                   stride_ks, stride_vs, MASK=False, IEEE_FP32=IEEE_FP32)
    # the diagonal block(s): keys lo..hi, masked; keys above hi are in the future of every query
    # here and are never read
    hi = tl.minimum(lo + BLOCK_M, S)
    for start_n in range(lo, hi, BLOCK_N):
        acc, m_i, l_i = _attn_tile(acc, m_i, l_i, q, k_ptrs, v_ptrs, offs_m, offs_n, start_n, S, qk_scale,
                                   stride_ks, stride_vs, MASK=True, IEEE_FP32=IEEE_FP32)

    # normalise once at the end (every valid row saw its own key, so l_i > 0)
    o = acc / l_i[:, None]
    o_ptrs = o_ptr + b * stride_ob + h.to(tl.int64) * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :]
    tl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=(offs_m < S)[:, None])


def attn_causal_prefill(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, BLOCK_M: int = 128, BLOCK_N: int = 64,
                        num_warps: int = 8, num_stages: int = 3) -> torch.Tensor:
    assert q.dim() == 4 and k.shape == v.shape and q.shape[0] == k.shape[0] and q.shape[2:] == k.shape[2:]
    B, H, S, D = q.shape
    HKV = k.shape[1]
    assert H % HKV == 0 and D == triton.next_power_of_2(D) and D >= 16
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    # fp32 tiles are twice the size in registers and shared memory: smaller tiles, fewer stages
    if q.dtype == torch.float32:
        BLOCK_M, BLOCK_N, num_warps, num_stages = 32, 32, 4, 2
    if S <= 64:
        BLOCK_M, BLOCK_N = 32, 32
    o = torch.empty_like(q)
    qk_scale = D ** -0.5 * 1.4426950408889634  # scale * log2(e): softmax in base 2
    # query tiles on axis 0 so the long sequences' tiles spread over the SMs
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    _attn_fwd_kernel[grid](q, k, v, o, S, H, HKV, qk_scale, q.stride(0), q.stride(1), q.stride(2), k.stride(0),
                           k.stride(1), k.stride(2), v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1),
                           o.stride(2), D=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, IEEE_FP32=q.dtype == torch.float32,
                           num_warps=num_warps, num_stages=num_stages)
    return o
