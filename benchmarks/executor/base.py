"""The executor interface, and the executor that judges in the caller's own process.

    with make_executor(ExecutorSpec("local", device="cuda")) as executor:
        verdicts = executor.map([EvalRequest.for_task(task, src, config) for src in sources])

`submit(request)` returns a `concurrent.futures.Future` of the request's `Verdict`; `map` submits
a batch and returns its verdicts in the batch's order; `close` ends the executor's workers.
`slots` is how many requests it can usefully hold at once (a caller that may stop early, such as
the agent with `first_success`, keeps no more than that in flight).

Kinds: "inline" (this process, one at a time: `InlineExecutor`), "local" (CPU workers for the
static stage, one lane per GPU: `benchmarks.executor.local`), "ray" (Ray tasks on a cluster or a
local Ray: `benchmarks.executor.ray_exec`). Every kind judges with the same
`benchmarks.harness.judge.evaluate`, so a verdict does not depend on the kind.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from benchmarks.executor.request import EvalRequest, ExecutorError, judge_request

KINDS = ("inline", "local", "ray")


@dataclass(frozen=True)
class ExecutorSpec:
    """Which executor to build and its sizes (`make_executor`)."""

    kind: str = "inline"  # one of KINDS, or "auto": local on a GPU, inline on the CPU
    device: str = "auto"  # "cpu", "cuda" or "auto"
    lanes: int = 1  # candidates judged at once on the CPU (on CUDA: one lane per visible GPU)
    compile_workers: int = 2  # CPU processes for the static stage (0: in the submitting thread)
    ray_address: str | None = None  # a Ray cluster ("ray://host:10001", "auto"); None: local Ray
    ray_cpus: int | None = None  # CPUs of a local Ray instance (None: Ray's default)


class Executor(ABC):
    """Judges `EvalRequest`s; see the module docstring."""

    kind: str = ""
    slots: int = 1

    @abstractmethod
    def submit(self, request: EvalRequest) -> Future:
        """Start judging `request`; a future of its Verdict (its exception: ExecutorError)."""

    def map(self, requests: Iterable[EvalRequest]) -> list[Any]:
        """The verdicts of `requests`, in their order."""
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

    def submit(self, request: EvalRequest) -> Future:
        future: Future = Future()
        future.set_running_or_notify_cancel()
        try:
            future.set_result(judge_request(request))
        except Exception as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)
        return future

    def close(self) -> None:
        """Nothing to end: the judge's spare workers belong to the process (drain_spares)."""


def make_executor(spec: ExecutorSpec) -> Executor:
    """The executor `spec` describes. An unknown kind, or "ray" without Ray installed, is an
    ExecutorError that says what to do."""
    from benchmarks.harness.judge import resolve_device

    device = resolve_device(spec.device)
    kind = spec.kind
    if kind == "auto":
        kind = "local" if device == "cuda" else "inline"
    if kind == "inline":
        return InlineExecutor()
    if kind == "local":
        from benchmarks.executor.local import LocalExecutor

        return LocalExecutor(device, lanes=spec.lanes, compile_workers=spec.compile_workers)
    if kind == "ray":
        from benchmarks.executor.ray_exec import RayExecutor

        return RayExecutor(device, address=spec.ray_address, num_cpus=spec.ray_cpus)
    raise ExecutorError(f"executor {spec.kind!r}: expected auto or one of {', '.join(KINDS)}")
