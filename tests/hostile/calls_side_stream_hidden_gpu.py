# expect: forbidden_api
# task: softmax_fp32
# gpu: true
# unchecked: trace_evaded
# why: launches its kernel on a side stream and returns without waiting (so a timer recording its events on the current stream measures almost nothing), and hides the side stream from the worker's own check by replacing torch.cuda.current_stream with one that always answers the default stream. Where the static check is bypassed, the launch observer's per-stream counts show launches outside the timer's stream while the worker timed on that stream alone. Inside a CUDA graph's capture it launches on the capturing stream (a side stream there would break the capture, which is no evasion). Without the observer (the library not built) the worker's profiler sees the side stream and times device-wide
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

_SIDE = {}
_real_current = torch.cuda.current_stream


def _always_default(device=None):
    return torch.cuda.default_stream(device)


torch.cuda.current_stream = _always_default


def softmax(x):
    x = x.contiguous()
    M, N = x.shape
    y = torch.empty_like(x)
    if x.device not in _SIDE:
        _SIDE[x.device] = torch.cuda.Stream(device=x.device)
    block = min(4096, triton.next_power_of_2(N))
    if torch.cuda.is_current_stream_capturing():
        _row_softmax[(M,)](x, y, N, BLOCK=block)
        return y
    side = _SIDE[x.device]
    side.wait_stream(_real_current(x.device))
    with torch.cuda.stream(side):
        _row_softmax[(M,)](x, y, N, BLOCK=block)
    return y
