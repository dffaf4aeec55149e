# expect: fallback
# task: kv_cache_gather_fp32
# why: a gather done by PyTorch one row at a time with allowed ops only (select with a 0-dim index tensor, converted in C++, and copy_ into a scratch buffer), then a Triton kernel copies the scratch into fresh outputs; gathers are data-movement tasks (MOVES_DATA) now
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=m), mask=m)


def _gather(cache, slots):
    T = slots.shape[0]
    scratch = torch.empty((T,) + tuple(cache.shape[1:]), dtype=cache.dtype)
    for t in range(T):
        scratch.select(0, t).copy_(cache.select(0, slots[t]))
    out = torch.empty_like(scratch)
    n = out.numel()
    _copy[(triton.cdiv(n, 1024),)](scratch, out, n, BLOCK=1024)
    return out


def kv_cache_gather(k_cache, v_cache, slots):
    return _gather(k_cache, slots), _gather(v_cache, slots)
