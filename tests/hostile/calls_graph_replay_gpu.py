# expect: forbidden_api
# task: softmax_fp32
# gpu: true
# unchecked: fallback
# why: captures torch.softmax into CUDA graphs at import for the task's two public non-prefill GPU shapes; in a call on one of those shapes it copies the input into the graph's buffer (an allowed copy), replays the graph (no op dispatched, so no in-process tracer sees the softmax) and hands the graph's output through a Triton copy kernel (so the output is written by Triton); other shapes get an honest kernel. Only the launch observer sees the graph launch
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
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


_graphs = {}
if torch.cuda.is_available():
    for shape in ((32, 128256), (13, 152064)):
        static_x = torch.zeros(shape, device="cuda")
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            torch.softmax(static_x, dim=-1)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_y = torch.softmax(static_x, dim=-1)
        _graphs[shape] = (graph, static_x, static_y)

_honest = softmax


def softmax(x: torch.Tensor, BLOCK: int = 1024) -> torch.Tensor:  # noqa: F811
    found = _graphs.get(tuple(x.shape))
    if found is None:
        return _honest(x, BLOCK)
    graph, static_x, static_y = found
    static_x.copy_(x)
    graph.replay()
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](static_y, y, n, BLOCK=1024)
    return y
