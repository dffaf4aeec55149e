# expect: trace_evaded
# task: softmax_fp32
# gpu: true
# why: an honest softmax that also launches, on every call, a Triton kernel named like the worker's marker for the launch observer (_kernforge_observer_marker), trying to move the observer's window boundaries so that work lands in a window judged more loosely; the observer sees more markers than the worker launches. On the CPU there is no observer and it passes
import torch
import triton
import triton.language as tl


@triton.jit
def _row_softmax(x_ptr, y_ptr, stride_x, stride_y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    offs = tl.arange(0, BLOCK)

    row_max = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        row_max = tl.maximum(row_max, x)
    m = tl.max(row_max, axis=0)

    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + offs
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf")).to(tl.float32)
        acc += tl.exp(x - m)
    inv = 1.0 / tl.sum(acc, axis=0)

    for start in range(0, N, BLOCK):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=float("-inf")).to(tl.float32)
        tl.store(y_row + cols, (tl.exp(x - m) * inv).to(y_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor, BLOCK: int = 1024) -> torch.Tensor:
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    block = min(BLOCK, triton.next_power_of_2(N))
    _row_softmax[(M,)](x, y, x.stride(0), y.stride(0), N, BLOCK=block)
    return y


@triton.jit
def _kernforge_observer_marker(x_ptr):
    tl.store(x_ptr, 1)


_honest = softmax


def softmax(x: torch.Tensor, BLOCK: int = 1024) -> torch.Tensor:  # noqa: F811
    y = _honest(x, BLOCK)
    _kernforge_observer_marker[(1,)](torch.empty(1, dtype=torch.uint8, device=x.device))
    return y
