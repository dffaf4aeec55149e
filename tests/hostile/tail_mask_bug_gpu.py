# expect: numerical_mismatch
# task: silu_fp16
# gpu: true
# why: walks each row in 128-wide chunks and stops at the last full one, so the last N % 128 columns are never written (left zero); every declared GPU shape of silu has N a multiple of 128, so it passed on the H200 (the CPU's N = 1000 caught it); fails on the ragged GPU shape the judge derives (N = 18943)
import torch
import triton
import triton.language as tl


@triton.jit
def _silu_full_chunks(x_ptr, y_ptr, N, N_FULL, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    for start in range(0, N_FULL, BLOCK):
        cols = start + offs
        x = tl.load(x_ptr + row * N + cols).to(tl.float32)
        tl.store(y_ptr + row * N + cols, (x / (1.0 + tl.exp(-x))).to(y_ptr.dtype.element_ty))


def silu(x):
    x = x.contiguous()
    M, N = x.shape
    y = torch.zeros_like(x)
    _silu_full_chunks[(M,)](x, y, N, N - N % 128, BLOCK=128)
    return y
