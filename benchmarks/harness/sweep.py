"""A sweep: many configurations of one kernel timed in one warm, sandboxed GPU worker, ranked.

The configurations are sources that differ only in their tunables (block sizes, warps, stages):
variants of one kernel. Judging each fully costs seconds of correctness trials, a re-measurement
and a profile; a sweep instead times all of them in one worker process (`worker.run_sweep`):
each is imported, called once outside the clock (compile), checked against the task's reference
on the same inputs, and timed briefly. A configuration that fails (static check, import, an
exception, a wrong answer) is recorded with its reason and the sweep goes on.

What is trusted: nothing here decides a verdict. The worker runs candidate code, so its answer
is a RANKING, validated only for shape (a positive time for every shape asked, entries in the
order asked); the few best configurations then go through the full judge and the interleaved
re-measurement like any candidate (agents/offline/policy.py). Without a GPU nothing is measured
and the record says so, never a number.

    sweep(task, sources, configs, device="cuda") -> Sweep   # entries fastest first, failed last
"""

from __future__ import annotations

import math
import time
from typing import Any

from pydantic import BaseModel, Field

from benchmarks.harness import sandbox
from benchmarks.harness.child import run_job
from benchmarks.harness.graph_timing import wants_graph
from benchmarks.harness.judge_config import SWEEP_MAX_REPS, SWEEP_REP_MS, SWEEP_WARMUP_MS
from benchmarks.harness.messages import ShapeSpec, SweepJob, SweepResult
from benchmarks.harness.shapes import fresh_seed
from benchmarks.harness.static_check import check_task_candidate
from benchmarks.task import Task

NO_GPU = "not measured (no GPU): timing needs a CUDA device"


class SweepEntry(BaseModel):
    """One configuration of a sweep: its time per shape (microseconds) and score, or why it
    failed. `index` is its position in the configurations the caller gave."""

    index: int
    config: dict[str, Any]
    times_us: dict[str, float] = Field(default_factory=dict)
    error: str = ""
    score: float | None = None  # weighted geometric mean of times_us; None: not measured

    @property
    def measured(self) -> bool:
        return self.score is not None


class Sweep(BaseModel):
    """The ranking a sweep produced (or why there is none). `entries` are ranked: measured ones
    by score, fastest first, then the failed ones in the caller's order. It round-trips through
    JSON (the executors' lanes send it so)."""

    measured: bool
    reason: str = ""
    shapes: list[str] = Field(default_factory=list)
    weights: list[float] = Field(default_factory=list)  # the shapes' importance weights
    entries: list[SweepEntry] = Field(default_factory=list)
    seconds: float = 0.0
    compile_note: str = ""  # what was compiled ahead on CPUs before the GPU worker ran
    # the worker's median wall time per configuration (import, first call, check, timing)
    per_config_s: float | None = None
    recompiled: int = 0  # configurations the worker compiled kernels for (not compiled ahead)
    # the median seconds per configuration of each phase in the worker (SweepTiming.phases)
    phases_s: dict[str, float] = Field(default_factory=dict)
    scripted: bool = False  # True when a test seam produced it, not a GPU

    @property
    def failed(self) -> list[SweepEntry]:
        return [e for e in self.entries if not e.measured]

    def entry_for(self, config: dict[str, Any]) -> SweepEntry | None:
        """The entry of `config`, or None when it was not in the sweep."""
        return next((e for e in self.entries if e.config == config), None)


def weighted_score(times_us: dict[str, float], shapes: list[str], weights: list[float]) -> float:
    """The weighted geometric mean of per-shape times: exp(sum w ln t / sum w) over the shapes
    with a positive weight (every shape alike when none has one)."""
    pairs = [(w, times_us[s]) for s, w in zip(shapes, weights, strict=True) if w > 0]
    if not pairs:
        pairs = [(1.0, times_us[s]) for s in shapes]
    total = sum(w for w, _ in pairs)
    return math.exp(sum(w * math.log(t) for w, t in pairs) / total)


def ranked(entries: list[SweepEntry]) -> list[SweepEntry]:
    """Measured entries fastest first, then the failed ones in the caller's order."""
    return sorted(entries, key=lambda e: (not e.measured, e.score or 0.0, e.index))


def sweep(
    task: Task,
    sources: list[str],
    configs: list[dict[str, Any]],
    *,
    device: str = "cuda",
    seed: int | None = None,
    timeout_s: float = 600.0,
    trusted: bool = False,
    allow_unisolated: bool = False,
    triton_cache_seed: str = "",
    compile_note: str = "",
    warmup_ms: float = SWEEP_WARMUP_MS,
    rep_ms: float = SWEEP_REP_MS,
    max_reps: int = SWEEP_MAX_REPS,
) -> Sweep:
    """Time every source (`configs[i]` names what source i sets) on every GPU shape of `task`,
    in one sandboxed worker, on inputs of `seed` (default: a fresh one). Sources the static
    check rejects are dropped with its message before any runs. `triton_cache_seed`: a folder of
    the sources' kernels compiled ahead (benchmarks/executor/precompile.py)."""
    started = time.perf_counter()
    if len(sources) != len(configs):
        raise ValueError(f"sweep: {len(sources)} source(s) but {len(configs)} configuration(s)")
    shapes = [s.name for s in task.shapes]
    weights = [float(s.weight) for s in task.shapes]
    entries: dict[int, SweepEntry] = {}
    kept: list[int] = []
    for i, (source, config) in enumerate(zip(sources, configs, strict=True)):
        found = check_task_candidate(source, task, filename=f"cfg_{i}.py")
        if found.ok:
            kept.append(i)
        else:
            first = found.message.splitlines()[0] if found.message else "rejected"
            entries[i] = SweepEntry(index=i, config=config, error=f"static check: {first[:300]}")

    per_config: float | None = None
    recompiled = 0
    phases: dict[str, float] = {}

    def done(measured: bool, reason: str = "") -> Sweep:
        for i, config in enumerate(configs):
            entries.setdefault(i, SweepEntry(index=i, config=config, error=reason))
        return Sweep(
            measured=measured,
            reason=reason,
            shapes=shapes,
            weights=weights,
            entries=ranked(list(entries.values())),
            seconds=time.perf_counter() - started,
            compile_note=compile_note,
            per_config_s=per_config,
            recompiled=recompiled,
            phases_s=phases,
        )

    if device != "cuda":
        return done(False, NO_GPU)
    refused = sandbox.refusal(trusted=trusted, allow_unisolated=allow_unisolated)
    if refused:
        return done(False, f"not measured: {refused}")
    if not kept:
        return done(False, "not measured: the static check rejected every configuration")
    job = SweepJob(
        task_path=str(task.path),
        dtype=task.dtype,
        device="cuda",
        config_paths=[f"{{folder}}/cfg_{i}.py" for i in kept],
        shapes=[
            ShapeSpec(name=s.name, dims=dict(s.dims), graph=wants_graph(s.phase))
            for s in task.shapes
        ],
        seed=fresh_seed() if seed is None else seed,
        warmup_ms=warmup_ms,
        rep_ms=rep_ms,
        max_reps=max_reps,
    )
    files = {f"cfg_{i}.py": sources[i] for i in kept}
    result = run_job(
        "cuda", job, timeout_s=timeout_s, files=files, triton_cache_seed=triton_cache_seed
    )
    assert isinstance(result, SweepResult)
    problem = unusable(result, len(kept), shapes)
    if problem:
        return done(False, f"sweep failed: {problem}")
    spent = sorted(t.seconds for t in result.entries if t.seconds > 0)
    per_config = spent[len(spent) // 2] if spent else None
    recompiled = sum(1 for t in result.entries if t.compiled)
    phases = _median_phases([t.phases for t in result.entries if t.phases])
    for timing in result.entries:
        i = kept[timing.index]
        if timing.error:
            entries[i] = SweepEntry(index=i, config=configs[i], error=timing.error)
        else:
            score = weighted_score(timing.times_us, shapes, weights)
            entries[i] = SweepEntry(
                index=i, config=configs[i], times_us=dict(timing.times_us), score=score
            )
    measured = sum(1 for e in entries.values() if e.measured)
    if result.failed:
        ended = f"the sweep ended early: {result.message}"
        if not measured:
            return done(False, f"sweep failed: {result.message}")
        return done(True, ended)
    if not measured:
        return done(False, "not measured: every configuration failed")
    return done(True)


def _median_phases(seen: list[dict[str, float]]) -> dict[str, float]:
    """Per phase, the median of its seconds over the configurations that report it."""
    out: dict[str, float] = {}
    for phase in sorted({k for p in seen for k in p}):
        values = sorted(p[phase] for p in seen if phase in p)
        out[phase] = values[len(values) // 2]
    return out


def unusable(result: SweepResult, asked: int, shapes: list[str]) -> str | None:
    """Why a sweep worker's answer (written in the candidates' process) cannot be ranked, or
    None: entries out of the order asked, or a measured entry without a positive, finite time
    for exactly the shapes asked. A failed result must say why; one that did not fail must
    answer for every configuration."""
    if [e.index for e in result.entries] != list(range(len(result.entries))):
        return "the worker's entries are not the configurations asked, in order"
    if len(result.entries) > asked:
        return f"the worker answered for {len(result.entries)} configurations, {asked} were asked"
    for e in result.entries:
        if e.error:
            continue
        if sorted(e.times_us) != sorted(shapes):
            return f"the worker timed configuration {e.index} on {sorted(e.times_us)}, not {sorted(shapes)}"
        if not all(math.isfinite(t) and t > 0 for t in e.times_us.values()):
            return f"the worker returned a time for configuration {e.index} that is not positive"
    if result.failed and not result.message:
        return "the worker failed without saying why"
    if not result.failed and len(result.entries) != asked:
        return f"the worker answered for {len(result.entries)} of {asked} configurations"
    return None
