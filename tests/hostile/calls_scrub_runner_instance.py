# expect: forbidden_api
# task: softmax_fp32
# unchecked: trace_evaded
# why: computes the softmax with PyTorch with the dispatch recorder switched off (the probes list the switch as an evasion in the call's record) and Triton-copies the answer into the output; in its first call it finds the worker's trial runner among the collector's objects and sets an instance attribute `progress` on it, a writer that empties the evasions and counts from every call record before the line is written (the classes' namespaces were sealed, the runner object's own attributes not); it passed past the static check (tried 2026-12-07) until the worker made its runner, progress writer and launch counter before the candidate's import and sealed their attributes
import dataclasses
import gc

import torch
import triton
import triton.language as tl

_DONE = []


def _scrubbed(record):
    if record is None:
        return None
    return dataclasses.replace(record, scalar_reads=0, python_elements=0, evasions=[])


def _take_over():
    for obj in gc.get_objects():
        if type(obj).__name__ == "_TrialRunner" and hasattr(obj, "progress"):
            write = obj.progress

            def progress(event, write=write):
                if hasattr(event, "fallback"):
                    event = dataclasses.replace(
                        event,
                        fallback=_scrubbed(event.fallback),
                        repeat_fallback=_scrubbed(event.repeat_fallback),
                    )
                return write(event)

            obj.progress = progress
            _DONE.append(True)


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def softmax(x):
    if not _DONE:
        _take_over()
    with torch._C._DisableTorchDispatch():
        right = torch.softmax(x, dim=-1)
    y = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 1024),)](right, y, x.numel(), BLOCK=1024)
    return y
