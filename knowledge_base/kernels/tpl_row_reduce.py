"""Row reductions (sum, mean, max, absmax, L2 norm) over the last dimension, any row length.

Op: out[i] = reduce_j x[i, j] for x[M, N] with any row stride; OP is one of "sum", "mean", "max",
"absmax" (the amax that per-token quantization scales need) or "l2norm" (sqrt of the sum of
squares). Accumulation is fp32; out is fp32 [M].
Traffic: M * N * elem read once, 4 * M written: a pure read-bandwidth kernel.
Tiling: one program per row walks the row in BLOCK_N chunks and keeps a per-lane accumulator (a
BLOCK_N-wide vector), so the cross-lane reduction (shuffles + one shared-memory exchange) happens
once per row, after the loop, not once per chunk. Masked lanes load the reduction's identity:
0 for sums, -inf for max, 0 for absmax (|x| >= 0). For few, very long rows (decode logits: M = 1-32,
N = 128k) one program per row leaves most SMs idle; split rows across programs and merge partials
in a second pass (see the two-stage reduction doc) -- not done here.
Tunables: BLOCK_N (power of two, 1024-8192; next_power_of_2(N) for short rows), num_warps (4-16).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "row_reduction",
    "category": "reduce",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": [
        "one_program_per_row",
        "chunked_row_loop",
        "per_lane_accumulator",
        "reduction_identity_masks",
        "fp32_accumulation",
        "constexpr_specialization",
        "int64_offsets",
    ],
    "tunables": {"BLOCK_N": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"8192x4096 bf16 sum": 0.4934, "source": "docs/results/templates_h200.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
    "template": True,
}

OPS = ("sum", "mean", "max", "absmax", "l2norm")


@triton.jit
def _row_reduce_kernel(x_ptr, out_ptr, N, stride_x, OP: tl.constexpr, BLOCK_N: tl.constexpr):
    # one program per row, walked in BLOCK_N chunks; OP is a constexpr, so each op compiles to its
    # own loop
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    offs = tl.arange(0, BLOCK_N)
    # the identity of each reduction: -inf for max, 0 for the rest (0 is also safe for absmax,
    # since |x| >= 0)
    if OP == "max":
        acc = tl.full((BLOCK_N,), float("-inf"), tl.float32)
    else:
        acc = tl.zeros((BLOCK_N,), tl.float32)
    # the row tail loads the identity, so it changes nothing; all reductions run in fp32
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        if OP == "max":
            x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
            acc = tl.maximum(acc, x)
        elif OP == "absmax":
            x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
            acc = tl.maximum(acc, tl.abs(x))
        elif OP == "l2norm":
            x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
            acc += x * x
        else:
            acc += tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
    if OP == "max" or OP == "absmax":
        result = tl.max(acc, axis=0)
    elif OP == "l2norm":
        result = tl.sqrt(tl.sum(acc, axis=0))
    elif OP == "mean":
        result = tl.sum(acc, axis=0) / N
    else:
        result = tl.sum(acc, axis=0)
    tl.store(out_ptr + row, result)


def row_reduce(x: torch.Tensor, op: str = "sum", BLOCK_N: int = 4096) -> torch.Tensor:
    if op not in OPS:
        raise ValueError(f"op must be one of {OPS}, got {op!r}")
    assert x.dim() == 2, "expected x[M, N]"
    if x.stride(1) != 1:
        x = x.contiguous()
    M, N = x.shape
    out = torch.empty((M,), device=x.device, dtype=torch.float32)
    block = min(BLOCK_N, triton.next_power_of_2(max(N, 1)))
    # warps grow with the block: about 8 to 16 elements per thread
    num_warps = 4 if block <= 1024 else 8 if block <= 4096 else 16
    _row_reduce_kernel[(M,)](x, out, N, x.stride(0), OP=op, BLOCK_N=block, num_warps=num_warps)
    return out
