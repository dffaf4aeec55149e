"""What an executor is handed, and how any process turns it into a verdict.

An `EvalRequest` names its task by file (path, dtype, content hash) rather than holding the
loaded `Task`, so it pickles to a worker process or a Ray node. The task's files travel with it
for machines whose checkout lacks them (`EvalRequest.for_task(..., ship_task=True)`); a worker
loads the task once per process and judges with `benchmarks.harness.judge.evaluate`, exactly as
a direct call would: the executor changes where a candidate is judged, never how.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from benchmarks.harness import integrity
from benchmarks.harness.judge_config import JudgeConfig
from benchmarks.task import Task


class ExecutorError(RuntimeError):
    """The executor could not judge a request (not the candidate's fault): a lost worker that
    failed again on a fresh one, a task missing on a node, a missing optional dependency."""


@dataclass(frozen=True)
class EvalRequest:
    """One candidate to judge: its task (by file), its source, and how to judge it."""

    task_id: str
    task_path: str
    task_sha256: str  # the task file's sha256 when the request was made
    source: str  # the candidate's text
    config: JudgeConfig = field(default_factory=JudgeConfig)
    candidate: str = ""  # the path the verdict and the static check's messages name
    label: str = ""  # the verdict's `candidate` (default: `candidate`)
    # the task's files, name -> text, for a machine whose checkout lacks them (Ray nodes)
    task_files: dict[str, str] = field(default_factory=dict)
    # the caller's loaded task, used only where the request is judged in the caller's process
    task: Task | None = field(default=None, compare=False, repr=False)

    @classmethod
    def for_task(
        cls,
        task: Task,
        source: str,
        config: JudgeConfig,
        *,
        candidate: str = "",
        label: str = "",
        ship_task: bool = False,
    ) -> EvalRequest:
        """A request to judge `source` on the loaded `task`; `ship_task` carries the task's
        files with it."""
        files = (
            {Path(p).name: Path(p).read_text(encoding="utf-8") for p in integrity.seal(task)}
            if ship_task
            else {}
        )
        return cls(
            task_id=task.id,
            task_path=str(Path(task.path).resolve()),
            task_sha256=_sha256(Path(task.path)),
            source=source,
            config=config,
            candidate=candidate or label or "candidate.py",
            label=label,
            task_files=files,
            task=task,
        )

    def portable(self) -> EvalRequest:
        """This request without the loaded task (what travels to another process)."""
        return dataclasses.replace(self, task=None)


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


# (task file path, sha256) -> {task id: Task}, per process
_LOADED: dict[tuple[str, str], dict[str, Task]] = {}


def load_request_task(request: EvalRequest) -> Task:
    """The request's task, loaded in this process (once per file and content): from its path
    when the file there has the request's content, else from the files the request carries."""
    from benchmarks.loading import load_task_file

    if request.task is not None:
        return request.task
    path = Path(request.task_path)
    if _sha256(path) != request.task_sha256:
        path = _unpacked(request)
    key = (str(path), request.task_sha256)
    if key not in _LOADED:
        _LOADED[key] = {t.id: t for t in load_task_file(path)}
    tasks = _LOADED[key]
    if request.task_id not in tasks:
        raise ExecutorError(
            f"task {request.task_id}: {path} declares {', '.join(sorted(tasks))}, not this id"
        )
    return tasks[request.task_id]


def _unpacked(request: EvalRequest) -> Path:
    """The request's shipped task files written to a folder of this machine; their main file."""
    main = Path(request.task_path).name
    if main not in request.task_files:
        raise ExecutorError(
            f"task {request.task_id}: {request.task_path} is missing on this machine (or has "
            "other content) and the request carries no copy; give every node the same checkout, "
            "or let the executor ship task files"
        )
    folder = Path(tempfile.gettempdir()) / "kernforge-tasks" / request.task_sha256[:24]
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in request.task_files.items():
        target = folder / Path(name).name
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    if _sha256(folder / main) != request.task_sha256:
        raise ExecutorError(f"task {request.task_id}: the shipped copy of {main} is not intact")
    return folder / main


@dataclass(frozen=True)
class RemeasureRequest:
    """An interleaved re-measurement of an already-correct candidate against the incumbent
    (`benchmarks.harness.remeasure.interleaved`): `candidate` names the task, the candidate's
    source, the device and the seed; the incumbent's source and the rounds come beside it. It is
    GPU work, so an executor runs it where it times candidates: never beside another timing."""

    candidate: EvalRequest
    incumbent_source: str
    rounds: int

    @property
    def label(self) -> str:
        return f"re-measurement of {self.candidate.label or self.candidate.candidate}"

    def portable(self) -> RemeasureRequest:
        return dataclasses.replace(self, candidate=self.candidate.portable())


def measure_request(request: RemeasureRequest) -> Any:
    """The `Remeasure` of one request, measured in this process's workers."""
    from benchmarks.harness.remeasure import interleaved

    cand = request.candidate
    return interleaved(
        load_request_task(cand),
        request.incumbent_source,
        cand.source,
        device=cand.config.device,
        rounds=request.rounds,
        seed=cand.config.seed,
        triton_cache_seed=cand.config.triton_cache_seed,
    )


@dataclass(frozen=True)
class SweepRequest:
    """Many configurations of one kernel timed in one GPU worker, for a ranking
    (`benchmarks.harness.sweep.sweep`): `base` names the task, the device, the input seed and
    whether the code is the project's own (`config.trusted`); its source is the incumbent's (the
    label names it). `sources[i]` is the kernel with `configs[i]` set. It is GPU work, so an
    executor runs it where it times candidates: never beside another timing. An executor with
    CPU workers compiles every source's kernels ahead and seeds the sweep's worker with them
    (`base.config.triton_cache_seed`, `compile_note`)."""

    base: EvalRequest
    sources: list[str]
    configs: list[dict[str, Any]]
    timeout_s: float = 600.0
    compile_note: str = ""  # what the executor's CPU stage compiled ahead (set by the executor)

    @property
    def label(self) -> str:
        return f"sweep of {len(self.sources)} configurations of {self.base.label or self.base.candidate}"

    def portable(self) -> SweepRequest:
        return dataclasses.replace(self, base=self.base.portable())


def sweep_request(request: SweepRequest) -> Any:
    """The `Sweep` of one request, measured in this process's workers."""
    from benchmarks.harness.sweep import sweep

    config = request.base.config
    return sweep(
        load_request_task(request.base),
        list(request.sources),
        [dict(c) for c in request.configs],
        device=config.device,
        seed=config.seed,
        timeout_s=request.timeout_s,
        trusted=config.trusted,
        allow_unisolated=config.allow_unisolated,
        triton_cache_seed=config.triton_cache_seed,
        compile_note=request.compile_note,
    )


@dataclass(frozen=True)
class BaselineRequest:
    """The baselines of `base`'s task (eager and torch.compile of its reference on every GPU
    shape the judge times, and the device's peaks) measured into the baseline cache
    (`base.config.baseline_cache`) before any candidate needs them: an agent run on a GPU sends
    one when it starts, so a lane measures them while the run retrieves, generates and compiles
    its first candidate, and that candidate's judge finds them cached. `base.source` is not
    used. GPU work: an executor runs it where it times candidates, never beside a timing."""

    base: EvalRequest

    @property
    def label(self) -> str:
        return f"baselines of {self.base.task_id}"

    def portable(self) -> BaselineRequest:
        return dataclasses.replace(self, base=self.base.portable())


class BaselinesReady(BaseModel):
    """What a BaselineRequest did: `status` "ok" (measured or found cached), "not measured" (no
    GPU) or "failed" (with the `message`); the shapes it covered; its seconds."""

    status: str
    message: str = ""
    shapes: list[str] = Field(default_factory=list)
    seconds: float = 0.0


def baselines_request(request: BaselineRequest) -> BaselinesReady:
    """Measure (or find cached) the baselines of one request, in this process's workers: the
    same shapes, seed and cache the judge's perf stage uses (`benchmarks.harness.perf`)."""
    from benchmarks.harness import baselines
    from benchmarks.harness import shapes as shape_plan
    from benchmarks.harness.perf import run_baseline

    config = request.base.config
    if config.device != "cuda":
        return BaselinesReady(
            status="not measured", message="no GPU: baselines are timed on CUDA only"
        )
    t0 = time.perf_counter()
    task = load_request_task(request.base)
    timed = shape_plan.scored(
        shape_plan.plan_shapes(task, "cuda", config.shapes, config.shape_seed).shapes
    )
    try:
        found = run_baseline(
            task,
            timed,
            baselines.BASELINE_SEED,
            work_root=config.work_root,
            cache=config.baseline_cache,
        )
    except Exception as exc:  # noqa: BLE001 - the judge measures them itself later
        return BaselinesReady(
            status="failed",
            message=f"{type(exc).__name__}: {str(exc)[:300]}",
            seconds=time.perf_counter() - t0,
        )
    return BaselinesReady(
        status="ok" if found.get("status") == "ok" else "failed",
        message=str(found.get("message") or "")[:300],
        shapes=[s.name for s in timed],
        seconds=time.perf_counter() - t0,
    )


Request = EvalRequest | RemeasureRequest | SweepRequest | BaselineRequest


def run_request(request: Request) -> Any:
    """The verdict of an EvalRequest, the Remeasure of a RemeasureRequest, the Sweep of a
    SweepRequest, or the BaselinesReady of a BaselineRequest."""
    if isinstance(request, RemeasureRequest):
        return measure_request(request)
    if isinstance(request, SweepRequest):
        return sweep_request(request)
    if isinstance(request, BaselineRequest):
        return baselines_request(request)
    return judge_request(request)


def judge_request(request: EvalRequest) -> Any:
    """The verdict on one request, judged in this process by `benchmarks.harness.judge.evaluate`."""
    from benchmarks.harness.judge import evaluate

    return evaluate(
        load_request_task(request),
        request.candidate or "candidate.py",
        request.config,
        source=request.source,
        label=request.label or None,
    )
