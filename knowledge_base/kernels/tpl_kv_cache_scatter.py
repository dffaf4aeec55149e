"""Scatter new K/V tokens into a paged KV cache through a slot mapping (reshape-and-cache).

Op: for each new token t with slot = slot_mapping[t] >= 0, write k[t] and v[t] ([KV_HEADS, D]
each) to k_cache[slot // PAGE, slot % PAGE] and v_cache[...] of a cache shaped
[num_pages, PAGE, KV_HEADS, D]. Tokens with slot < 0 (padding in a batched step) are skipped.
Traffic: 2 * T * KV_HEADS * D * elem read and the same written: a data-dependent copy. The cache
itself can be tens of GB; only the T new rows are touched.
Tiling: grid (T, cdiv(KV_HEADS * D, BLOCK)): each program copies a contiguous BLOCK-element slice of
one token's [KV_HEADS, D] row (contiguous in both source and destination when the cache's inner two
dims are dense). The slot is loaded once as a scalar and converted to int64 before it is
multiplied by the page stride -- a pool of 100k pages x 16 tokens x 8 heads x 128 exceeds 2^31
elements. Skipping padding is folded into the mask: the valid range is HD for a real slot and 0 for
padding, so padding programs cost one scalar load and no memory traffic.
Gather vs scatter: the same pattern read the other way is an embedding lookup or an index_select;
a scatter with repeated destination slots would race (last writer wins) -- slot mappings are
unique by construction, which is what makes this safe without atomics.
Tunables: BLOCK (power of two, 256-2048 elements; >= KV_HEADS * D makes the second grid axis 1),
num_warps (2-4).
"""

import torch
import triton
import triton.language as tl

KB_META = {
    "op_family": "scatter_rows",
    "category": "index",
    "dtypes": ["fp32", "fp16", "bf16"],
    "techniques": [
        "data_dependent_store",
        "slot_mapping",
        "int64_offsets",
        "padding_skip_mask",
        "2d_grid_token_by_column_block",
        "paged_kv",
    ],
    "tunables": {"BLOCK": [256, 512, 1024, 2048], "num_warps": [2, 4]},
    "verified_on": ["NVIDIA H200"],
    "attainment": {"8192 tokens KVH8 D128 bf16": 0.6145, "source": "docs/results/templates_h200.json (NVIDIA H200, torch 2.11.0+cu130, triton 3.6.0, 2026-11-29)"},
    "template": True,
}


@triton.jit
def _kv_scatter_kernel(
    k_ptr,
    v_ptr,
    kc_ptr,
    vc_ptr,
    slot_ptr,
    HD,
    PAGE,
    stride_kt,
    stride_vt,
    stride_cp,
    stride_ct,
    BLOCK: tl.constexpr,
):
    # axis 0: one token; axis 1: a BLOCK slice of its KV_HEADS * D row (heads and D are contiguous
    # on both sides, asserted on the host)
    t = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    slot = tl.load(slot_ptr + t).to(tl.int64)
    # padding (slot < 0) shrinks the valid range to nothing: one compare, no scalar-vector AND
    mask = offs < tl.where(slot >= 0, HD, 0)
    # slot s lives in page s // PAGE, row s % PAGE of the paged cache
    dst = (slot // PAGE) * stride_cp + (slot % PAGE) * stride_ct + offs
    k = tl.load(k_ptr + t * stride_kt + offs, mask=mask)
    v = tl.load(v_ptr + t * stride_vt + offs, mask=mask)
    tl.store(kc_ptr + dst, k, mask=mask)
    tl.store(vc_ptr + dst, v, mask=mask)


def kv_cache_scatter(
    k: torch.Tensor,
    v: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
    BLOCK: int = 1024,
) -> None:
    """k, v [T, KV_HEADS, D]; caches [pages, PAGE, KV_HEADS, D] (updated in place); slots int [T]."""
    T, kv_heads, D = k.shape
    assert (
        v.shape == k.shape and k_cache.shape == v_cache.shape and k_cache.shape[2:] == (kv_heads, D)
    )
    assert k.stride(2) == 1 and k.stride(1) == D and v.stride(2) == 1 and v.stride(1) == D
    assert (
        k_cache.stride(3) == 1 and k_cache.stride(2) == D and v_cache.stride() == k_cache.stride()
    )
    hd = kv_heads * D
    block = min(BLOCK, triton.next_power_of_2(hd))
    _kv_scatter_kernel[(T, triton.cdiv(hd, block))](
        k,
        v,
        k_cache,
        v_cache,
        slot_mapping,
        hd,
        k_cache.shape[1],
        k.stride(0),
        v.stride(0),
        k_cache.stride(0),
        k_cache.stride(1),
        BLOCK=block,
        # small rows: 2 warps, so fewer threads sit idle
        num_warps=4 if block >= 1024 else 2,
    )
