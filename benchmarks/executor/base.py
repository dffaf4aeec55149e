"""The executor interface, and the executor that judges in the caller's own process.

    with make_executor(ExecutorSpec("local", device="cuda")) as executor:   # executor/choose.py
        verdicts = executor.map([EvalRequest.for_task(task, src, config) for src in sources])

`submit(request)` returns a `concurrent.futures.Future` of the request's `Verdict` (of a
`RemeasureRequest`: its `Remeasure`; of a `SweepRequest`: its `Sweep`; both measured where the
executor times candidates, so they never overlap a judge's timing on a GPU); `map` submits a batch and returns its
results in the batch's order; `close` ends the executor's workers. `prepare(request)` tells the
executor of a `SweepRequest` it expects soon, so it can start the CPU stage (compiling every
configuration) before the request comes; nothing is judged or timed until it is submitted.
`slots` is how many requests it can usefully hold at once (a caller that may stop early, such as
the agent with `first_success`, keeps no more than that in flight).

Kinds: "inline" (this process, one at a time: `InlineExecutor`), "local" (CPU workers for the
CPU stage, one lane per GPU: `benchmarks.executor.local`), "ray" (Ray tasks on a cluster or a
local Ray: `benchmarks.executor.ray_exec`). Every kind judges with the same
`benchmarks.harness.judge.evaluate`, so a verdict does not depend on the kind.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from concurrent.futures import Future
from types import TracebackType
from typing import Any

from benchmarks.executor.request import Request, run_request


class Executor(ABC):
    """Judges `EvalRequest`s; see the module docstring."""

    kind: str = ""
    slots: int = 1

    @abstractmethod
    def submit(self, request: Request) -> Future:
        """Start judging `request`; a future of its Verdict, its Remeasure or its Sweep (its
        exception: ExecutorError)."""

    def prepare(self, request: Request) -> None:  # noqa: B027 - optional: most kinds do nothing
        """`request` is expected to be submitted soon: start what of it needs no GPU (the local
        executor compiles a sweep's configurations ahead). It decides nothing; a request
        submitted without it, or different from it, is staged as usual."""

    def map(self, requests: Iterable[Request]) -> list[Any]:
        """The results of `requests`, in their order."""
        futures = [self.submit(r) for r in requests]
        return [f.result() for f in futures]

    @abstractmethod
    def close(self) -> None:
        """End this executor's workers (idempotent)."""

    def describe(self) -> str:
        return self.kind

    def __enter__(self) -> Executor:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class InlineExecutor(Executor):
    """Judges each request when it is submitted, in this process (the judge's own spare-worker
    pool keeps the next worker warm)."""

    kind = "inline"
    slots = 1

    def submit(self, request: Request) -> Future:
        future: Future = Future()
        future.set_running_or_notify_cancel()
        try:
            future.set_result(run_request(request))
        except Exception as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)
        return future

    def close(self) -> None:
        """Nothing to end: the judge's spare workers belong to the process (drain_spares)."""
