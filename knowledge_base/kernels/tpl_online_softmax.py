"""Online softmax over the last dimension, several rows per program, any row length.

Op: y[i, :] = softmax(x[i, :]) for a 2-D x[M, N] with any row stride; fp32 math, output in x's dtype.
Traffic: minimal 2 * M * N * elem (read once, write once). When the whole row fits in one block
(N <= BLOCK_N) the kernel reads it exactly once: load, max, exp, sum, store. Longer rows take two
passes over the row: pass 1 keeps a running max m and a running sum s rescaled by exp(m_old -
m_new) whenever the max grows (the "online" recurrence, Milakov & Gimelshein 2018), pass 2
re-reads and writes. The second read often hits L2 for rows up to a few MB.
Tiling: a program owns ROWS rows (a ROWS x BLOCK_N tile). Packing rows matters for short rows:
with N = 128 and one row per program, each program moves 256 bytes and the launch is dominated
by scheduling; with ROWS = 16 each program moves 4 KB. For long rows use ROWS = 1.
Numerics: masked lanes load -inf; rows that are entirely -inf produce 0/0 in naive code, so the
rescale factor uses `where(m == -inf, 0, ...)`. Accumulation is fp32 whatever the input dtype.
Tunables: ROWS (1-32, so that ROWS * BLOCK_N is about 2K-8K elements), BLOCK_N (power of two;
>= N for the single-pass path), num_warps (1-16; 4 for <= 4K elements per tile, 8-16 above).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "row_normalization",
    "category": "normalization",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": [
        "online_softmax",
        "row_packing",
        "single_pass_when_fits",
        "fp32_accumulation",
        "masking",
        "neg_inf_guard",
    ],
    "tunables": {
        "ROWS": [1, 2, 4, 8, 16, 32],
        "BLOCK_N": [128, 1024, 4096, 8192],
        "num_warps": [1, 2, 4, 8, 16],
    },
    "verified_on": ["NVIDIA H200"],
    "attainment": {"262144x128 fp16 (row packing)": 0.7157, "32768x4096 fp16": 0.8312, "source": "docs/results/templates_h200.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
    "template": True,
}


@triton.jit
def _online_softmax_kernel(
    x_ptr,
    y_ptr,
    M,
    N,
    stride_xm,
    stride_ym,
    ROWS: tl.constexpr,
    BLOCK_N: tl.constexpr,
    SINGLE_PASS: tl.constexpr,
):
    # each program owns ROWS rows: short rows are packed several to a program so a program still
    # has a few thousand elements of work; int64 so rows * stride cannot wrap
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    row_ok = rows < M
    cols = tl.arange(0, BLOCK_N)
    x_rows = x_ptr + rows[:, None] * stride_xm
    y_rows = y_ptr + rows[:, None] * stride_ym

    # the whole row fits in one block: read once, max, exp, sum, write (the Triton tutorial's fused
    # softmax)
    if SINGLE_PASS:
        mask = row_ok[:, None] & (cols[None, :] < N)
        # masked lanes (row tail, rows past M) load -inf: exp gives 0, they never win the max
        x = tl.load(x_rows + cols[None, :], mask=mask, other=float("-inf")).to(tl.float32)
        m = tl.max(x, axis=1)
        # a row of all -inf would give exp(-inf - -inf) = NaN: subtract 0 instead, and divide by 1
        # below when the sum is 0
        m_safe = tl.where(m == float("-inf"), 0.0, m)
        e = tl.exp(x - m_safe[:, None])
        s = tl.sum(e, axis=1)
        y = e / tl.where(s == 0.0, 1.0, s)[:, None]
        tl.store(y_rows + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        # rows longer than a block: online softmax. Pass 1 keeps a running max m and a sum s
        # rescaled by exp(m_old - m_new) whenever the max grows; pass 2 writes exp(x - m) / s
        m = tl.full((ROWS,), float("-inf"), tl.float32)
        s = tl.zeros((ROWS,), tl.float32)
        for start in range(0, N, BLOCK_N):
            c = start + cols
            mask = row_ok[:, None] & (c[None, :] < N)
            x = tl.load(x_rows + c[None, :], mask=mask, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=1))
            m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
            alpha = tl.where(m == float("-inf"), 0.0, tl.exp(m - m_safe))
            s = s * alpha + tl.sum(tl.exp(x - m_safe[:, None]), axis=1)
            m = m_new
        m_safe = tl.where(m == float("-inf"), 0.0, m)
        inv = 1.0 / tl.where(s == 0.0, 1.0, s)
        for start in range(0, N, BLOCK_N):
            c = start + cols
            mask = row_ok[:, None] & (c[None, :] < N)
            x = tl.load(x_rows + c[None, :], mask=mask, other=float("-inf")).to(tl.float32)
            y = tl.exp(x - m_safe[:, None]) * inv[:, None]
            tl.store(y_rows + c[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)


def online_softmax(x: torch.Tensor, max_block: int = 8192, tile_elems: int = 4096) -> torch.Tensor:
    assert x.dim() == 2, "expected x[M, N]"
    if x.stride(1) != 1:
        x = x.contiguous()
    M, N = x.shape
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    # one block per row up to max_block elements; longer rows loop
    block_n = min(triton.next_power_of_2(max(N, 1)), max_block)
    # pack rows until a program holds about tile_elems elements
    rows = max(1, min(32, tile_elems // block_n, triton.next_power_of_2(M)))
    # more warps for bigger tiles, so each thread keeps a few elements in registers
    num_warps = 4 if rows * block_n <= 4096 else 8 if rows * block_n <= 8192 else 16
    _online_softmax_kernel[(triton.cdiv(M, rows),)](
        x,
        y,
        M,
        N,
        x.stride(0),
        y.stride(0),
        ROWS=rows,
        BLOCK_N=block_n,
        SINGLE_PASS=N <= block_n,
        num_warps=num_warps,
    )
    return y
