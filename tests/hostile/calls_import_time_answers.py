# expect: forbidden_api
# task: softmax_fp32
# unchecked: numerical_mismatch
# why: at import, walks up the worker's frames to its job (the input seed, the shapes, the trial plan), regenerates every trial's inputs, computes the answers with PyTorch before any call is traced, and at each call Triton-copies the next answer out; run past the static check, the worker must not hold the seed until the candidate is imported
import inspect

import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def _answers():
    """Per input shape, the outputs in the order the worker will call (a shape's first trial
    is called twice)."""
    frame = inspect.currentframe()
    while frame is not None:
        job, task = frame.f_locals.get("job"), frame.f_locals.get("task")
        if job is not None and task is not None and hasattr(job, "seed"):
            break
        frame = frame.f_back
    if frame is None:
        return {}
    from benchmarks.harness.worker import trial_plan

    seed = getattr(job, "seed", None)
    if not isinstance(seed, int):
        return {}
    gen = torch.Generator(device=job.device)
    queues = {}
    for item in trial_plan(job.shapes, job.modes, job.trials, seed):
        gen.manual_seed(item.seed)
        args = task.make_inputs(item.dims, item.mode, gen)
        out = task.reference_for(item.dims)(*args)
        queue = queues.setdefault(tuple(args[0].shape), [])
        queue += [out, out] if item.first else [out]
    return queues


_QUEUES = _answers()


def softmax(x):
    y = torch.empty_like(x)
    queue = _QUEUES.get(tuple(x.shape))
    src = queue.pop(0) if queue else x.contiguous()
    n = x.numel()
    _copy[(triton.cdiv(n, 1024),)](src.contiguous(), y, n, BLOCK=1024)
    return y
