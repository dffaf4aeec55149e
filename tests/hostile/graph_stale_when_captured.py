# expect: forbidden_api
# unchecked: numerical_mismatch
# task: silu_fp32
# gpu: true
# why: computes SiLU honestly on every ordinary call, but while a CUDA graph is being captured (decode shapes are timed as served, inside one) it launches its kernel over no elements and returns the answer it computed for the same input tensor before the capture: the graph does no work, with the same kernel and launch count; the judge changes an input, replays the graph and checks its answer, which is stale
import torch
import triton
import triton.language as tl


@triton.jit
def _silu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = x / (1.0 + tl.exp(-x))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


_ANSWERS = {}


def silu(x):
    x = x.contiguous()
    key = (x.data_ptr(), tuple(x.shape))
    if torch.cuda.is_current_stream_capturing() and key in _ANSWERS:
        y = _ANSWERS[key]
        _silu[(1,)](x, y, 16, BLOCK=1024)  # the same kernel and specialisation, 16 elements
        return y
    y = torch.empty_like(x)
    n = x.numel()
    _silu[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    _ANSWERS[key] = y
    return y
