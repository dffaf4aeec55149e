# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: a numerically stable softmax compiled by torch.compile (Inductor's kernels, not the candidate's), behind one decoy Triton launch per call; run past the static check, the dispatch recorder (which no longer lets PyTorch wrap it for Dynamo) must still see PyTorch compute the answer (fallback); since the worker checks its own modules after every trial it stops first: Dynamo, compiling the call, installs globals of its own (resume functions, compiled frames) in the judge's tracer module, which is replacing the judge's code
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < n)


def _stable(x):
    x = x.float()
    e = torch.exp(x - x.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


_compiled = torch.compile(_stable)


def softmax(x):
    _touch[(1,)](x, x.numel(), BLOCK=16)  # a Triton launch, for show
    return _compiled(x).to(x.dtype)
