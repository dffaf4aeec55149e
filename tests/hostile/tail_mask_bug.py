# expect: numerical_mismatch
# task: softmax_fp32
# why: assumes N is a multiple of BLOCK=128: the tail chunk's padding (loaded as 0.0) is counted in the max and the sum, so N=128 passes and N=1000 is off
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_full_blocks(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    row_max = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + offs
        # masked only to stay in bounds; the padding value 0.0 then takes part in the math
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        row_max = tl.maximum(row_max, x)
    m = tl.max(row_max, axis=0)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + offs
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0)
        acc += tl.exp(x - m)
    inv = 1.0 / tl.sum(acc, axis=0)
    for start in range(0, N, BLOCK):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * N + cols, tl.exp(x - m) * inv, mask=mask)


def softmax(x):
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    _softmax_full_blocks[(M,)](x, y, N, BLOCK=128)
    return y
