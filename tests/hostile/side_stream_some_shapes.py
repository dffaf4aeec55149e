# expect: none
# task: softmax_fp32
# gpu: true
# flags: side_stream
# why: honest, with a side stream on some shapes only: the prefill-sized calls (1024 rows or more) go to a fresh torch.cuda.Stream without waiting, the decode-sized ones to the current stream. Under the launch observer the worker must time every shape device-wide once any trial launched on a side stream (the observer counts the timing of all shapes together, so one shape timed on its stream alone beside another's side-stream launches read as a hidden stream, a false trace_evaded)
import torch
import triton
import triton.language as tl


@triton.jit
def _row_softmax(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + offs
        m = tl.maximum(m, tl.load(x_ptr + row * N + cols, mask=cols < N, other=float("-inf")))
    row_max = tl.max(m, axis=0)
    acc = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + offs
        x = tl.load(x_ptr + row * N + cols, mask=cols < N, other=float("-inf"))
        acc += tl.exp(x - row_max)
    inv = 1.0 / tl.sum(acc, axis=0)
    for start in range(0, N, BLOCK):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_ptr + row * N + cols, mask=mask, other=float("-inf"))
        tl.store(y_ptr + row * N + cols, tl.exp(x - row_max) * inv, mask=mask)


_SIDE = {}


def softmax(x):
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    if x.device not in _SIDE:
        _SIDE[x.device] = torch.cuda.Stream(device=x.device)
    block = min(4096, triton.next_power_of_2(N))
    if M < 1024:
        _row_softmax[(M,)](x, y, N, BLOCK=block)
        return y
    side = _SIDE[x.device]
    side.wait_stream(torch.cuda.current_stream(x.device))
    with torch.cuda.stream(side):
        _row_softmax[(M,)](x, y, N, BLOCK=block)
    return y
