"""Row log-sum-exp with a z-loss term, one pass over each row of logits.

Op: lse[i] = log(sum_j exp(z[i, j])) over the last dimension of logits z[M, V], and
zloss[i] = coef * lse[i]^2 (the auxiliary loss that keeps logits from drifting, as in PaLM).
Both fp32 [M]. The same single pass is the core of cross entropy (loss = lse - z[target]) and of
log-softmax (z - lse): only the epilogue differs.
Traffic: M * V * elem read once, 8 * M written. For vocabularies of 32k-256k in bf16 a row is
64-512 KB, so this is a read-bandwidth kernel over a large tensor (32 x 128256 bf16 = 8 MB per
decode step, 8192 x 128256 = 2.1 GB for a training batch).
Tiling: one program per row walks it in BLOCK_V chunks with per-lane online (max, sum) state: when
a chunk raises a lane's max from m to m', its sum is rescaled by exp(m - m'). Lanes are merged once
at the end: M* = max m; S = sum s * exp(m - M*); lse = M* + log(S). Masked lanes load -inf, and the
rescale factor is guarded so a lane that has only seen -inf does not compute exp(-inf + inf) = NaN.
Rows of all -inf give lse = -inf (as torch.logsumexp does).
Tunables: BLOCK_V (power of two, 2048-8192), num_warps (8-16). For M = 1-32 rows, split rows over
programs and merge (max, sum) pairs with the same rule in a second kernel.
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "row_reduction_loss",
    "category": "loss",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": [
        "online_logsumexp",
        "one_program_per_row",
        "chunked_row_loop",
        "per_lane_accumulator",
        "neg_inf_guard",
        "fp32_accumulation",
        "int64_offsets",
    ],
    "tunables": {"BLOCK_V": [2048, 4096, 8192], "num_warps": [8, 16]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"4096x128256 bf16": 0.5357, "source": "docs/results/templates_h200.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
    "template": True,
}


@triton.jit
def _lse_zloss_kernel(z_ptr, lse_ptr, zloss_ptr, V, stride_z, coef, BLOCK_V: tl.constexpr):
    # one program per row of logits, walked in BLOCK_V chunks
    row = tl.program_id(0).to(tl.int64)
    z_row = z_ptr + row * stride_z
    offs = tl.arange(0, BLOCK_V)
    # online log-sum-exp: per-lane running max m and sum s of exp(z - m), fp32
    m = tl.full((BLOCK_V,), float("-inf"), tl.float32)
    s = tl.zeros((BLOCK_V,), tl.float32)
    for start in range(0, V, BLOCK_V):
        cols = start + offs
        z = tl.load(z_row + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, z)
        # subtract 0 while a lane's max is still -inf: exp(-inf - 0) = 0, where exp(-inf - -inf)
        # would be NaN
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - m_safe) + tl.exp(z - m_safe)
        m = m_new
    # combine the lanes at the row max, with the same -inf guard
    m_row = tl.max(m, axis=0)
    m_row_safe = tl.where(m_row == float("-inf"), 0.0, m_row)
    total = tl.sum(s * tl.exp(m - m_row_safe), axis=0)
    lse = m_row_safe + tl.log(total)  # log(0) = -inf for an all -inf row
    tl.store(lse_ptr + row, lse)
    # z-loss per row: coef * lse**2 (pushes the normaliser toward 0)
    tl.store(zloss_ptr + row, coef * lse * lse)


def logsumexp_zloss(
    z: torch.Tensor, coef: float = 1e-4, BLOCK_V: int = 4096
) -> tuple[torch.Tensor, torch.Tensor]:
    assert z.dim() == 2, "expected logits z[M, V]"
    if z.stride(1) != 1:
        z = z.contiguous()
    M, V = z.shape
    lse = torch.empty((M,), device=z.device, dtype=torch.float32)
    zloss = torch.empty((M,), device=z.device, dtype=torch.float32)
    block = min(BLOCK_V, triton.next_power_of_2(V))
    # wide blocks get more warps so each thread holds a bounded number of elements
    num_warps = 8 if block <= 4096 else 16
    _lse_zloss_kernel[(M,)](z, lse, zloss, V, z.stride(0), coef, BLOCK_V=block, num_warps=num_warps)
    return lse, zloss
