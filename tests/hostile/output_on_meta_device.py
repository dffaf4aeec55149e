# expect: wrong_output_type
# task: softmax_fp32
# why: launches a kernel on a scratch buffer and returns a tensor on the meta device (right shape and dtype, no data at all): the worker cannot read its bytes; the verdict must be the candidate's failure, not the judge's harness_error ("worker failed", which tells the agent to try the same kernel again)
import torch
import triton
import triton.language as tl


@triton.jit
def _zero(p, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, tl.zeros([BLOCK], tl.float32), mask=offs < n)


def softmax(x):
    scratch = torch.empty(16, device=x.device, dtype=torch.float32)
    _zero[(1,)](scratch, 16, BLOCK=16)
    return torch.empty(x.shape, device="meta", dtype=x.dtype)
