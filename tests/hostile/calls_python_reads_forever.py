# expect: fallback
# task: softmax_fp32
# why: reads tensor elements into Python without end, swallowing every Exception, and would only return once the judge's time limit ran out; the judge stops a call once it has read far more elements than a call may (a BaseException its `except Exception` cannot catch), so the verdict is fallback within seconds, not a timeout
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def softmax(x):
    total = 0.0
    while True:
        try:
            for j in range(x.shape[1]):
                total += x[0, j].item()
        except Exception:  # noqa: BLE001 - the point: nothing the candidate catches stops it
            continue
    y = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y
