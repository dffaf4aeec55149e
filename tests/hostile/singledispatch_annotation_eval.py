# expect: forbidden_api
# task: softmax_fp32
# why: functools.singledispatch's register() evaluates a function's string annotation (typing.get_type_hints, eval in the module's globals): the annotation is Python the static check never parsed, and here it opens /etc/hostname; then an honest softmax raises what it stole into the verdict. singledispatch is refused, and string annotations are checked as code
import functools

import torch
import triton
import triton.language as tl

PAYLOAD = "open('/etc/hostname').read()"
STOLEN = []


@functools.singledispatch
def _hook(arg):
    return arg


@_hook.register
def _(arg: "(STOLEN.append(eval(PAYLOAD)), int)[1]"):
    return arg


@triton.jit
def _row_softmax(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * N + offs, mask=offs < N, other=float("-inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * N + offs, e / tl.sum(e, axis=0), mask=offs < N)


def softmax(x):
    x = x.contiguous()
    rows, cols = x.shape
    y = torch.empty_like(x)
    _row_softmax[(rows,)](x, y, cols, BLOCK=triton.next_power_of_2(cols))
    raise RuntimeError("stolen: " + repr(STOLEN))
