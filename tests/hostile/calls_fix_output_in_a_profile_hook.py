# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: its kernel only copies x (wrong); at import it installs a profile function (sys.setprofile) that fires when the worker enters its trial writer, reads the call's output and inputs from that frame's arguments and writes torch.softmax of the input into the output in place, after the traced call and before its bytes are copied: no attribute of the judge's code is replaced; run past the static check, a profile or trace function installed by the candidate must be seen
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def _hook(frame, event, arg):
    if event != "call" or frame.f_code.co_name != "write_trial":
        return
    out, inputs = frame.f_locals.get("out"), frame.f_locals.get("inputs")
    if isinstance(out, torch.Tensor) and inputs:
        out.copy_(torch.softmax(inputs[0], dim=-1))
        repeat = frame.f_locals.get("repeat")
        if isinstance(repeat, torch.Tensor):
            repeat.copy_(out)


sys.setprofile(_hook)


def softmax(x):
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y
