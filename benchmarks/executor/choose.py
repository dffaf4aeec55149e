"""Which executor: its description (`ExecutorSpec`) and `make_executor`, which builds it."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.executor import KINDS
from benchmarks.executor.base import Executor, InlineExecutor
from benchmarks.executor.request import ExecutorError


@dataclass(frozen=True)
class ExecutorSpec:
    """Which executor to build and its sizes (`make_executor`)."""

    kind: str = "inline"  # one of KINDS, or "auto": local on a GPU, inline on the CPU
    device: str = "auto"  # "cpu", "cuda" or "auto"
    lanes: int = 1  # candidates judged at once on the CPU (on CUDA: one lane per visible GPU)
    compile_workers: int = 2  # CPU processes for the CPU stage (0: none; the judge does it all)
    ray_address: str | None = None  # a Ray cluster ("ray://host:10001", "auto"); None: local Ray
    ray_cpus: int | None = None  # CPUs of a local Ray instance (None: Ray's default)


def make_executor(spec: ExecutorSpec) -> Executor:
    """The executor `spec` describes. An unknown kind, or "ray" without Ray installed, is an
    ExecutorError that says what to do. A Ray executor may be asked for "cuda" on a machine
    without a GPU: the GPUs are the cluster's (the executor checks that it has some)."""
    from benchmarks.harness.judge import resolve_device

    kind = spec.kind
    on_ray = kind == "ray" and spec.device in ("cpu", "cuda")
    device = spec.device if on_ray else resolve_device(spec.device)
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
