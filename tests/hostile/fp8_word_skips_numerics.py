# expect: numerical_mismatch
# task: softmax_fp32
# why: an fp32 task, a kernel that writes exp(x) (never subtracts the max, never normalises: wrong everywhere), and the word float8 in a comment: the CPU judge used to turn every numerical mismatch of a source mentioning float8 into a "skipped" note, for any task, and it passed; the interpreter's fp8 casts are now the GPU's and nothing is skipped
import torch
import triton
import triton.language as tl


@triton.jit
def _exp_only(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.exp(tl.load(x_ptr + offs, mask=mask)), mask=mask)


def softmax(x):
    y = torch.empty_like(x)
    n = x.numel()
    _exp_only[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y
