# expect: resource_limit
# task: softmax_fp32
# why: computes a correct softmax, then allocates host memory 64 MiB at a time (written, so resident) and keeps it; the judge must stop it (its memory watchdog, or MemoryError at the CPU's address-space limit) with resource_limit, and neither the judge nor the next evaluation may suffer; no process or worker folder is left
import torch
import triton
import triton.language as tl

_HOARD = []


@triton.jit
def _row_softmax(x_ptr, y_ptr, stride, N, BLOCK: tl.constexpr):
    # one program per row; the whole row in one masked block (CPU shapes are small)
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


def _softmax(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _row_softmax[(x.shape[0],)](
        x, y, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1])
    )
    return y


def softmax(x):
    y = _softmax(x)
    for _ in range(4096):  # 256 GiB: the judge stops it long before
        _HOARD.append(torch.ones(16 << 20))
    return y
