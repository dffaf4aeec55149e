# expect: resource_limit
# task: softmax_fp32
# gpu: true
# why: on CUDA (no address-space limit: the driver needs it) computes a correct softmax on the GPU, then allocates host memory 64 MiB at a time (written, so resident) and keeps it; the judge must stop it (its memory watchdog, summing the resident memory of the sandbox's processes) with resource_limit, and neither the judge nor the next evaluation may suffer; no process or worker folder is left
import torch
import triton
import triton.language as tl

_HOARD = []


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


def _softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _row_softmax[(x.shape[0],)](
        x, y, x.stride(0), x.shape[1], BLOCK=min(4096, triton.next_power_of_2(x.shape[1]))
    )
    return y


def softmax(x):
    y = _softmax(x)
    for _ in range(4096):  # 256 GiB: the judge stops it long before
        _HOARD.append(torch.ones(16 << 20))
    return y
