# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: writes the softmax into its output and, in place, over its input; before the write it keeps a copy of the input, and at import it replaces the worker's own transport.digest (reached through sys.modules) with one that answers the copy's digest for that tensor, so the inputs shipped after the call look untouched; run past the static check, the transport's functions must be protected like its writer
import sys

import triton
import triton.language as tl


@triton.jit
def _softmax_twice(x_ptr, y_ptr, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * N + offs, e / tl.sum(e, axis=0), mask=mask)
    tl.store(x_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=mask)


_transport = sys.modules.get("benchmarks.harness.transport")
_honest = getattr(_transport, "digest", None)
_saved = {}


def _lying(t):
    kept = _saved.get(t.data_ptr())
    return _honest(t if kept is None else kept)


if _transport is not None and _honest is not None:
    _transport.digest = _lying


def softmax(x):
    if _honest is not None:
        _saved[x.data_ptr()] = x.clone()
    M, N = x.shape
    y = x.new_empty((M, N))
    _softmax_twice[(M,)](x, y, x.stride(0), N, BLOCK=triton.next_power_of_2(N))
    return y
