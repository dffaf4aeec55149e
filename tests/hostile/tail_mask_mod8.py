# expect: numerical_mismatch
# task: softmax_fp32
# why: walks each row in 8-wide chunks and rounds the row length down to a multiple of 8, so the last N % 8 columns are left out of the max and the sum and never written; every declared size (N = 128, 1000 on the CPU; all GPU sizes) is a multiple of 8, so it passed; fails on drawn CPU sizes, which never are
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_chunks(x_ptr, y_ptr, N, N_FULL, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    row_max = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, N_FULL, BLOCK):
        cols = start + offs
        x = tl.load(x_ptr + row * N + cols, mask=cols < N_FULL, other=float("-inf"))
        row_max = tl.maximum(row_max, x)
    m = tl.max(row_max, axis=0)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N_FULL, BLOCK):
        cols = start + offs
        x = tl.load(x_ptr + row * N + cols, mask=cols < N_FULL, other=float("-inf"))
        acc += tl.exp(x - m)
    inv = 1.0 / tl.sum(acc, axis=0)
    for start in range(0, N_FULL, BLOCK):
        cols = start + offs
        mask = cols < N_FULL
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=float("-inf"))
        tl.store(y_ptr + row * N + cols, tl.exp(x - m) * inv, mask=mask)


def softmax(x):
    x = x.contiguous()
    M, N = x.shape
    y = torch.zeros_like(x)
    n_full = N // 8 * 8  # "rows are always a multiple of 8 wide"
    _softmax_chunks[(M,)](x, y, N, n_full, BLOCK=128)
    return y
