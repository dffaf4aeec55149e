"""KV gather by slot, (k_cache[slots], v_cache[slots]): one program per tile of tokens, both caches at once.

Op: index_select along dim 0 of k_cache, v_cache [S, H, Dh] by int64 slots[T]; two [T, H, Dh]
outputs, exact copies.
Traffic: T slot ids, then 2 * T * H * Dh * elem read (only the listed slots) and the same
written: bandwidth-bound for long prefixes (each slot row is a contiguous H * Dh run: 2 KB for
Llama-3 in bf16, so the random row order costs little).
Tiling: 2-D grid (tiles of ROWS tokens, BLOCK_D blocks of the H * Dh row); each program loads its
ROWS slot ids once and copies the matching K and V row blocks (masked at the token and column
edges). Slot offsets are int64 (S * H * Dh passes 2^31 for large pools). Small rows (Falcon's
64-wide MQA head) get several tokens per program from ROWS.
Tunables: ROWS (1-16), BLOCK_D (power of two, 64-2048), num_warps (4-8).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "gather",
    "category": "index",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": ["row_gather_by_index", "fused_multi_tensor_copy", "rows_per_program", "tail_mask",
                   "int64_offsets"],
    "tunables": {"ROWS": [1, 4, 8, 16], "BLOCK_D": [64, 256, 1024, 2048], "num_warps": [4, 8]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"kv_cache_gather_bf16": 0.4985, "kv_cache_gather_fp16": 0.3258, "kv_cache_gather_fp32": 0.6457, "source": "docs/results/solution_times_h200.md (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
}


@triton.jit
def _kv_gather_kernel(k_ptr, v_ptr, slots_ptr, k_out, v_out, T, HD, ROWS: tl.constexpr, BLOCK_D: tl.constexpr):
    # the cache [S, H, Dh] is read as rows of HD = H * Dh; axis 0: ROWS output tokens, axis 1: a
    # BLOCK_D slice of the row
    toks = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    tok_ok = toks < T
    mask = tok_ok[:, None] & (cols[None, :] < HD)
    # token t's row is cache slot slots[t]: a gather of whole rows, contiguous within each row
    slot = tl.load(slots_ptr + toks, mask=tok_ok, other=0)
    src = slot[:, None] * HD + cols[None, :]
    dst = toks.to(tl.int64)[:, None] * HD + cols[None, :]
    tl.store(k_out + dst, tl.load(k_ptr + src, mask=mask, other=0.0), mask=mask)
    tl.store(v_out + dst, tl.load(v_ptr + src, mask=mask, other=0.0), mask=mask)


def kv_cache_gather(k_cache: torch.Tensor, v_cache: torch.Tensor, slots: torch.Tensor, ROWS: int = 4,
                    BLOCK_D: int = 1024, num_warps: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    assert k_cache.shape == v_cache.shape and slots.dim() == 1
    k_cache, v_cache, slots = k_cache.contiguous(), v_cache.contiguous(), slots.contiguous()
    S, H, Dh = k_cache.shape
    T = slots.shape[0]
    k = torch.empty((T, H, Dh), dtype=k_cache.dtype, device=k_cache.device)
    v = torch.empty((T, H, Dh), dtype=v_cache.dtype, device=v_cache.device)
    HD = H * Dh
    block_d = min(BLOCK_D, triton.next_power_of_2(HD))
    # about 4096 elements per program: several tokens when a row is short
    rows = max(1, min(ROWS, 4096 // block_d))
    _kv_gather_kernel[(triton.cdiv(T, rows), triton.cdiv(HD, block_d))](k_cache, v_cache, slots, k, v, T, HD,
                                                                         ROWS=rows, BLOCK_D=block_d,
                                                                         num_warps=num_warps)
    return k, v
