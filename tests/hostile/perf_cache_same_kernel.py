# expect: numerical_mismatch
# task: softmax_fp32
# gpu: true
# why: one kernel, one launch per call, always the same name: on a tensor it has seen four times (the timing loop, keyed on its pointer and two values) a runtime flag makes the same kernel copy the cached answer instead of computing, so launch counts and kernel names match every other call and the time stays above the roofline; the judge's call after timing changes elements of the input in place (8, after_timing.CHANGED_PER_INPUT) and checks the answer, which is the stale one
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax(x_ptr, y_ptr, cache_ptr, stride, N, use_cache, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    if use_cache != 0:
        for start in range(0, N, BLOCK):
            cols = start + offs
            mask = cols < N
            tl.store(
                y_ptr + row * stride + cols,
                tl.load(cache_ptr + row * stride + cols, mask=mask),
                mask=mask,
            )
    else:
        m = tl.full([BLOCK], float("-inf"), tl.float32)
        for start in range(0, N, BLOCK):
            cols = start + offs
            x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=float("-inf"))
            m = tl.maximum(m, x.to(tl.float32))
        row_max = tl.max(m, axis=0)
        acc = tl.zeros([BLOCK], tl.float32)
        for start in range(0, N, BLOCK):
            cols = start + offs
            x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=float("-inf"))
            acc += tl.exp(x.to(tl.float32) - row_max)
        inv = 1.0 / tl.sum(acc, axis=0)
        for start in range(0, N, BLOCK):
            cols = start + offs
            mask = cols < N
            x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf"))
            tl.store(
                y_ptr + row * stride + cols, tl.exp(x.to(tl.float32) - row_max) * inv, mask=mask
            )


_SEEN = {}


def softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    key = (x.data_ptr(), tuple(x.shape), x[0, 0].item(), x[-1, -1].item())
    hits, last = _SEEN.get(key, (0, None))
    cached = hits >= 4 and last is not None
    _softmax[(x.shape[0],)](
        x,
        y,
        last if cached else y,
        x.stride(0),
        x.shape[1],
        1 if cached else 0,
        BLOCK=min(4096, triton.next_power_of_2(x.shape[1])),
    )
    _SEEN.clear()
    _SEEN[key] = (hits + 1, y)
    return y
