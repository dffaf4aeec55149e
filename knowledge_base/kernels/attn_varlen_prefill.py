"""Variable-length causal flash attention over packed sequences (cu_seqlens), GQA.

Op: for each packed sequence [c_i, c_{i+1}) of q[T, H, D], k/v[T, HKV, D]: causal softmax
attention within the sequence; query head h reads KV head h // (H / HKV).
Traffic: q, k, v read and o written once (k/v re-read per query tile from L2); FLOPs
4 * D * sum_i n_i (n_i + 1) / 2 per head: compute-bound for long prompts.
Grid: (cdiv(max_seqlen, BLOCK_M), B, H) -- max_seqlen comes from the caller, so nothing is read
back to the host. Program (t, i, h) reads sequence i's bounds from cu_seqlens and returns at once
when query tile t starts past the sequence's end (short sequences waste only empty programs).
Tiling: like the dense causal kernel -- q tile [BLOCK_M, D], online softmax in base 2 over key
tiles of BLOCK_N, fp32 statistics and accumulator; key tiles wholly below the tile's diagonal run
without masks, the diagonal ones mask j > i and the sequence end, and key tiles above the
diagonal are skipped. Rows are addressed as (c_i + position) * row_stride with int64 offsets.
Tunables: BLOCK_M (64-128), BLOCK_N (32-64, BLOCK_M % BLOCK_N == 0), num_warps (4-8),
num_stages (2-3); fp32 uses 32 x 32 tiles.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "attention",
    "category": "attention",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["flash_attention", "varlen_packing", "cu_seqlens", "online_softmax", "exp2_softmax",
                   "causal_tile_skipping", "diagonal_tile_mask", "gqa_head_mapping", "early_exit_programs",
                   "int64_offsets"],
    "tunables": {"BLOCK_M": [32, 64, 128], "BLOCK_N": [32, 64], "num_warps": [4, 8], "num_stages": [2, 3]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"attn_varlen_prefill_bf16": 0.3723, "attn_varlen_prefill_fp16": 0.3614, "attn_varlen_prefill_fp32": 0.1482, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _varlen_tile(acc, m_i, l_i, q, k_ptrs, v_ptrs, offs_m, offs_n, start_n, seq_len, qk_scale, stride_kt,
                 stride_vt, MASK: tl.constexpr, IEEE_FP32: tl.constexpr):
    keys = start_n + offs_n
    # keys past the sequence end are loaded as 0 and masked to -inf below, so they get zero weight
    kv_ok = keys < seq_len
    k = tl.load(k_ptrs + keys[:, None].to(tl.int64) * stride_kt, mask=kv_ok[:, None], other=0.0)
    v = tl.load(v_ptrs + keys[:, None].to(tl.int64) * stride_vt, mask=kv_ok[:, None], other=0.0)
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
def _varlen_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, cu_ptr, H, HKV, qk_scale, stride_qt, stride_qh, stride_kt,
                       stride_kh, stride_vt, stride_vh, stride_ot, stride_oh, D: tl.constexpr, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, IEEE_FP32: tl.constexpr):
    # axis 0: a query tile within the sequence; axis 1: the sequence; axis 2: the head. The grid is
    # sized for max_seqlen, so shorter sequences have idle tiles
    pid_m = tl.program_id(0)
    seq = tl.program_id(1)
    h = tl.program_id(2)
    # packed layout: sequence seq occupies tokens cu_seqlens[seq] .. cu_seqlens[seq + 1] of the [T,
    # H, D] tensors
    seq_start = tl.load(cu_ptr + seq)
    seq_len = tl.load(cu_ptr + seq + 1) - seq_start
    lo = pid_m * BLOCK_M
    # tiles past this sequence's end do nothing
    if lo < seq_len:
        # grouped-query attention: H // HKV query heads share one KV head
        kvh = h // (H // HKV)
        base = seq_start.to(tl.int64)
        offs_m = lo + tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, BLOCK_N)
        offs_d = tl.arange(0, D)
        # query rows past the sequence end: loaded as 0, never stored
        m_ok = offs_m < seq_len
        q_ptrs = q_ptr + (base + offs_m[:, None]) * stride_qt + h * stride_qh + offs_d[None, :]
        q = tl.load(q_ptrs, mask=m_ok[:, None], other=0.0)
        k_ptrs = k_ptr + base * stride_kt + kvh * stride_kh + offs_d[None, :]
        v_ptrs = v_ptr + base * stride_vt + kvh * stride_vh + offs_d[None, :]

        # online softmax state, fp32
        m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_M], tl.float32)
        acc = tl.zeros([BLOCK_M, D], tl.float32)
        for start_n in range(0, lo, BLOCK_N):  # below the diagonal: every key visible, all in range
            acc, m_i, l_i = _varlen_tile(acc, m_i, l_i, q, k_ptrs, v_ptrs, offs_m, offs_n, start_n, seq_len,
                                         qk_scale, stride_kt, stride_vt, MASK=False, IEEE_FP32=IEEE_FP32)
        # the diagonal block(s), causal- and tail-masked; later keys are never read
        hi = tl.minimum(lo + BLOCK_M, seq_len)
        for start_n in range(lo, hi, BLOCK_N):
            acc, m_i, l_i = _varlen_tile(acc, m_i, l_i, q, k_ptrs, v_ptrs, offs_m, offs_n, start_n, seq_len,
                                         qk_scale, stride_kt, stride_vt, MASK=True, IEEE_FP32=IEEE_FP32)
        # normalise once at the end
        o = acc / l_i[:, None]
        o_ptrs = o_ptr + (base + offs_m[:, None]) * stride_ot + h * stride_oh + offs_d[None, :]
        tl.store(o_ptrs, o.to(o_ptr.dtype.element_ty), mask=m_ok[:, None])


def attn_varlen_prefill(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens: torch.Tensor,
                        max_seqlen: int, BLOCK_M: int = 128, BLOCK_N: int = 64, num_warps: int = 8,
                        num_stages: int = 3) -> torch.Tensor:
    assert q.dim() == 3 and k.shape == v.shape and q.shape[0] == k.shape[0] and q.shape[2] == k.shape[2]
    T, H, D = q.shape
    HKV = k.shape[1]
    B = cu_seqlens.shape[0] - 1
    assert H % HKV == 0 and D == triton.next_power_of_2(D) and D >= 16
    q, k, v, cu = q.contiguous(), k.contiguous(), v.contiguous(), cu_seqlens.contiguous()
    if q.dtype == torch.float32:
        BLOCK_M, BLOCK_N, num_warps, num_stages = 32, 32, 4, 2
    if max_seqlen <= 64:
        BLOCK_M, BLOCK_N = 32, 32
    o = torch.empty_like(q)
    qk_scale = D ** -0.5 * 1.4426950408889634
    grid = (triton.cdiv(max_seqlen, BLOCK_M), B, H)
    _varlen_fwd_kernel[grid](q, k, v, o, cu, H, HKV, qk_scale, q.stride(0), q.stride(1), k.stride(0), k.stride(1),
                             v.stride(0), v.stride(1), o.stride(0), o.stride(1), D=D, BLOCK_M=BLOCK_M,
                             BLOCK_N=BLOCK_N, IEEE_FP32=q.dtype == torch.float32, num_warps=num_warps,
                             num_stages=num_stages)
    return o
