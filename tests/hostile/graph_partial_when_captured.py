# expect: forbidden_api
# unchecked: numerical_mismatch
# task: silu_fp32
# gpu: true
# why: computes SiLU honestly on every ordinary call, but while a CUDA graph is being captured it recomputes only the first 60 % of the output into the answer it made for the same input tensor before the capture, the rest left stale: the same kernel and launch count, 60 % of the work; with one element of the input changed before the checked replay it would pass 60 % of the time, so the judge changes 8 elements (after_timing.CHANGED_PER_INPUT) (passes about 2 % of the time)
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
        part = (x.numel() * 6 // 10) // 16 * 16  # a multiple of 16: the same specialisation
        _silu[(triton.cdiv(part, 1024),)](x, y, part, BLOCK=1024)
        return y
    y = torch.empty_like(x)
    n = x.numel()
    _silu[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    _ANSWERS[key] = y
    return y
