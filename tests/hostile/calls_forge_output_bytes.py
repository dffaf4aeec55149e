# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: its kernel only copies x, scaled by a different factor on every call (wrong, and its repeat call's bytes differ, so the repeat is shipped whole too); it keeps each call's input, and at import it replaces the transport's byte writer (benchmarks.harness.transport._write_tensor, below the protected write_trial) with one that writes torch.softmax of the kept input in place of the output's bytes: the answer is computed after the traced call, when no tracer watches; run past the static check, every function of the transport must be protected
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)


_transport = sys.modules.get("benchmarks.harness.transport")
_honest = getattr(_transport, "_write_tensor", None)
_kept = {}


def _lying(f, tensor):
    x = _kept.get(tensor.data_ptr())
    if x is not None:
        tensor = torch.softmax(x.float(), dim=-1).to(x.dtype)
    return _honest(f, tensor)


if _honest is not None:
    _transport._write_tensor = _lying


def softmax(x):
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](x, y, n, 1.0 + len(_kept), BLOCK=1024)
    _kept[y.data_ptr()] = x.clone()
    return y
