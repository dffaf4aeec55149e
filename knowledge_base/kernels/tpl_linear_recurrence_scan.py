"""Linear-recurrence scan h[t] = a[t] * h[t-1] + x[t] along rows, chunked with a carried state.

Op: for each row i of a[M, T] and x[M, T] (same shape), h[i, t] = a[i, t] * h[i, t-1] + x[i, t] with
h[i, -1] = 0; output h in x's dtype. a = 1 gives cumsum; a constant decay gives an exponential
moving average; per-step gates give the recurrences of linear attention and state-space models.
Why it is a scan: the step h -> a*h + x is an affine map, and composing affine maps is
associative: (a1, x1) then (a2, x2) = (a1*a2, a2*x1 + x2). `tl.associative_scan` over (a, x) pairs
computes every prefix composition of a BLOCK_T chunk in parallel (a log-depth tree over lanes).
Traffic: 2 * M * T * elem read, M * T * elem written, once each.
Tiling: one program per row; the row is walked in BLOCK_T chunks, and the state entering a chunk
(the carry h_prev) is folded in as h = A_prefix * h_prev + X_prefix, where (A_prefix, X_prefix) is
the chunk's inclusive scan. The carry for the next chunk is the last element of h (read with a
masked sum, since Triton has no scalar indexing of a block). State and products are fp32: a
product of many gates underflows gracefully in fp32, but in bf16 the prefix sums would drift.
Tunables: BLOCK_T (power of two, 256-4096), num_warps (4-8). Many short rows: pack rows per
program (2-D tile, scan along axis 1). One very long row: three-phase (chunk totals, scan of
totals, fix-up) across programs.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "scan",
    "category": "scan",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": [
        "associative_scan",
        "tuple_combine",
        "chunked_row_loop",
        "carried_state",
        "fp32_accumulation",
        "int64_offsets",
    ],
    "tunables": {"BLOCK_T": [256, 1024, 4096], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"4096x4096 fp32": 0.7616, "source": "docs/results/templates_h200.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
    "template": True,
}


@triton.jit
def _affine_combine(a1, x1, a2, x2):
    # composition of two affine maps h -> a*h + x (first (a1, x1), then (a2, x2)): associative, so
    # the recurrence h_t = a_t * h_{t-1} + x_t becomes a parallel scan
    return a1 * a2, a2 * x1 + x2


@triton.jit
def _linear_scan_kernel(
    a_ptr, x_ptr, h_ptr, T, stride_a, stride_x, stride_h, BLOCK_T: tl.constexpr
):
    # one program per independent sequence (row); time runs along the row in BLOCK_T chunks
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_T)
    # carry: h at the end of the previous chunk (h_{-1} = 0)
    carry = tl.zeros((), tl.float32)
    for start in range(0, T, BLOCK_T):
        t = start + offs
        mask = t < T
        # masked lanes are the identity map (a=1, x=0); they sit after the valid ones, so harmless
        a = tl.load(a_ptr + row * stride_a + t, mask=mask, other=1.0).to(tl.float32)
        x = tl.load(x_ptr + row * stride_x + t, mask=mask, other=0.0).to(tl.float32)
        # in-chunk prefix compositions: h_t = a_pre_t * carry + x_pre_t
        a_pre, x_pre = tl.associative_scan((a, x), 0, _affine_combine)
        h = a_pre * carry + x_pre
        tl.store(h_ptr + row * stride_h + t, h.to(h_ptr.dtype.element_ty), mask=mask)
        # the last valid lane's h is the next chunk's carry
        last = tl.minimum(T - start, BLOCK_T) - 1
        carry = tl.sum(tl.where(offs == last, h, 0.0), axis=0)


def linear_recurrence_scan(a: torch.Tensor, x: torch.Tensor, BLOCK_T: int = 1024) -> torch.Tensor:
    assert a.shape == x.shape and x.dim() == 2, "expected a[M, T] and x[M, T]"
    if a.stride(1) != 1:
        a = a.contiguous()
    if x.stride(1) != 1:
        x = x.contiguous()
    M, T = x.shape
    h = torch.empty_like(x)
    block = min(BLOCK_T, triton.next_power_of_2(T))
    _linear_scan_kernel[(M,)](
        a,
        x,
        h,
        T,
        a.stride(0),
        x.stride(0),
        h.stride(0),
        BLOCK_T=block,
        num_warps=4 if block <= 1024 else 8,
    )
    return h
