# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: its kernel only copies x (wrong), and at import it replaces the worker's trial writer (benchmarks.harness.transport.write_trial, reached through sys.modules) with one that writes torch.softmax of the call's inputs in place of the call's output: the answer is computed after the traced call, when no tracer watches, and is what the judge reads back; run past the static check, the writer must be protected like the tracers, so the patch is seen after the next call
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def _swap_writer():
    transport = sys.modules.get("benchmarks.harness.transport")
    if transport is None:
        return
    honest = transport.write_trial

    def lying(folder, stem, out, repeat, mutated, inputs=None, repeat_inputs=None):
        if inputs:
            out = torch.softmax(inputs[0].float(), dim=-1).to(inputs[0].dtype)
            if repeat is not None:
                repeat = out.clone()
        return honest(folder, stem, out, repeat, mutated, inputs, repeat_inputs)

    transport.write_trial = lying


_swap_writer()


def softmax(x):
    y = torch.empty_like(x)
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y
