"""The CPU stage of an evaluation, run ahead of the GPU on CPU worker processes.

What can happen before a candidate needs its GPU: the static check (pure text: the candidate is
parsed, never run). A candidate the static check rejects is answered by the judge without ever
starting a worker, so the GPU stage passes it straight through.

Triton's compilation happens inside the candidate's own sandboxed worker, on its first call, into
a Triton cache private to that worker (a shared cache would let one candidate plant kernels
for another: `benchmarks.harness.sandbox`). Compiling it ahead in a second process would need
that process to run the candidate's code, and the cache it filled could only be handed to that
same candidate: this stage does not do it. On the CPU there is nothing to compile at all (the
Triton interpreter runs the kernel's Python).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from benchmarks.executor.request import EvalRequest, load_request_task


@dataclass(frozen=True)
class Precompiled:
    """What the CPU stage found: whether the static check passed, its message, its seconds."""

    static_ok: bool
    message: str = ""
    seconds: float = 0.0


def precompile(request: EvalRequest) -> Precompiled:
    """The static check of `request`'s candidate against its task (no candidate code runs)."""
    from benchmarks.harness.static_check import check_source

    t0 = time.perf_counter()
    task = load_request_task(request)
    params = [p.name for p in task.signature().parameters.values()]
    found = check_source(
        request.source,
        entry_point=task.entry_point,
        params=params,
        forbidden=task.forbidden,
        filename=request.candidate or "candidate.py",
        entry_kind=task.entry_kind,
    )
    return Precompiled(found.ok, found.message, time.perf_counter() - t0)
