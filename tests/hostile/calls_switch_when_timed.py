# expect: launch_mismatch
# task: softmax_fp32
# gpu: true
# why: runs its real kernel on every correctness call, but once called many times on one tensor (the timing loop) launches a cheaper kernel that writes the cached answer, so it is timed doing less; each timed call's kernels are counted and must be the shape's
import torch
import triton
import triton.language as tl


@triton.jit
def _row_softmax(x_ptr, y_ptr, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


_SEEN = {}


def softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    key = (x.data_ptr(), x[0, 0].item(), x[-1, -1].item())
    hits, last = _SEEN.get(key, (0, None))
    if hits >= 4 and last is not None and last.shape == x.shape:
        n = x.numel()
        _copy[(triton.cdiv(n, 1024),)](last, y, n, BLOCK=1024)
    else:
        _row_softmax[(x.shape[0],)](
            x, y, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1])
        )
    _SEEN.clear()
    _SEEN[key] = (hits + 1, y)
    return y
