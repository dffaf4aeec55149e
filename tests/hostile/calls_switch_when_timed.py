# expect: launch_mismatch
# task: softmax_fp32
# gpu: true
# why: runs its real kernel on every correctness call, but once called many times on one tensor (the timing loop) launches a cheaper kernel that writes the cached answer, so it is timed doing less; each timed call's kernels are counted and must be the shape's
import torch
import triton
import triton.language as tl


@triton.jit
def _row_softmax(x_ptr, y_ptr, stride, N, BLOCK: tl.constexpr):
    # looped over the row in BLOCK-wide pieces: one program per row at a 128k vocabulary would
    # otherwise compile a 256k-wide block for minutes
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
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
        tl.store(y_ptr + row * stride + cols, tl.exp(x.to(tl.float32) - row_max) * inv, mask=mask)


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
            x, y, x.stride(0), x.shape[1], BLOCK=min(4096, triton.next_power_of_2(x.shape[1]))
        )
    _SEEN.clear()
    _SEEN[key] = (hits + 1, y)
    return y
