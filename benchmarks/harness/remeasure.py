"""Interleaved re-measurement: does a candidate really beat the incumbent, beyond the noise?

Both kernels (already judged correct) are timed in one child process, in the order
incumbent, candidate, candidate, incumbent per round and shape, so drift in clocks or temperature
hits both equally. Decode shapes are timed as the judge scores them, per call of many captured
into one CUDA graph (benchmarks/harness/graph_timing.py), where both kernels can be captured.
The noise is how far repeated timings of the *same* code disagree; a gain counts only when it
is larger than that noise (and than `min_gain`).

On a machine without a GPU nothing is measured, and the result says so.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from benchmarks.harness.child import run_job
from benchmarks.harness.graph_timing import wants_graph
from benchmarks.harness.judge_config import REMEASURE_ROUNDS
from benchmarks.harness.messages import RemeasureJob, ShapeSpec
from benchmarks.harness.shapes import fresh_seed
from benchmarks.task import Task
from profiling import geomean


class Remeasure(BaseModel):
    """Interleaved re-measurement of a candidate against the incumbent (or why there was none).

    The one record of this fact: the agent stores it in its attempts (`agents.core.state`), so
    it round-trips through JSON and the agent's checkpoints."""

    measured: bool
    reason: str = ""
    incumbent_id: int | None = None  # the caller's id of the incumbent (the agent's attempt id)
    incumbent_us: list[float] = Field(default_factory=list)  # per shape: median of its timings
    candidate_us: list[float] = Field(default_factory=list)
    shapes: list[str] = Field(default_factory=list)
    gain: float = 0.0  # geomean over shapes of incumbent/candidate, minus 1
    noise: float = 0.0  # largest relative spread between repeated timings of the same code
    significant: bool = False
    scripted: bool = False  # True when a test seam produced it, not a GPU


def summarize(times: dict[str, dict[str, list[float]]], min_gain: float = 0.01) -> Remeasure:
    """Gain and noise from interleaved timings ({"incumbent"|"candidate": {shape: [us, ...]}})."""
    shapes = list(times["incumbent"])
    inc = [sorted(times["incumbent"][s])[len(times["incumbent"][s]) // 2] for s in shapes]
    cand = [sorted(times["candidate"][s])[len(times["candidate"][s]) // 2] for s in shapes]
    noise = 0.0
    for label in ("incumbent", "candidate"):
        for s in shapes:
            vals = times[label][s]
            if len(vals) > 1:
                noise = max(noise, (max(vals) - min(vals)) / min(vals))
    gain = geomean([i / c for i, c in zip(inc, cand, strict=True)]) - 1.0
    return Remeasure(
        measured=True,
        incumbent_us=inc,
        candidate_us=cand,
        shapes=shapes,
        gain=gain,
        noise=noise,
        significant=gain > max(noise, min_gain),
    )


def interleaved(
    task: Task,
    incumbent_source: str,
    candidate_source: str,
    *,
    device: str = "cuda",
    rounds: int = REMEASURE_ROUNDS,
    seed: int | None = None,
    timeout_s: float = 600.0,
    min_gain: float = 0.01,
) -> Remeasure:
    """Time both kernels A B B A per round on every GPU shape of `task`, on inputs of `seed`
    (default: a fresh one, so neither kernel can have its answers ready)."""
    if device != "cuda":
        return Remeasure(measured=False, reason="not measured (no GPU): timing needs a CUDA device")
    job = RemeasureJob(
        task_path=str(task.path),
        dtype=task.dtype,
        device="cuda",
        incumbent_path="{folder}/incumbent.py",
        candidate_path="{folder}/candidate.py",
        shapes=[
            ShapeSpec(name=s.name, dims=dict(s.dims), graph=wants_graph(s.phase))
            for s in task.shapes
        ],
        rounds=rounds,
        seed=fresh_seed() if seed is None else seed,
    )
    files = {"incumbent.py": incumbent_source, "candidate.py": candidate_source}
    result = run_job("cuda", job, timeout_s=timeout_s, files=files)
    if result.failed:
        return Remeasure(measured=False, reason=f"re-measurement failed: {result.message}")
    problem = _unusable(result.times)
    if problem:
        return Remeasure(measured=False, reason=f"re-measurement failed: {problem}")
    return summarize(result.times, min_gain)


def _unusable(times: dict[str, dict[str, list[float]]]) -> str | None:
    """Why timings from the worker (which ran candidate code) cannot be summarised, or None."""
    if sorted(times) != ["candidate", "incumbent"]:
        return f"the worker returned timings for {sorted(times)}, not incumbent and candidate"
    if not times["incumbent"] or set(times["incumbent"]) != set(times["candidate"]):
        return "the worker returned timings for different shapes of the two kernels"
    for label, by_shape in times.items():
        for shape, values in by_shape.items():
            if not values or not all(v > 0 for v in values):
                return f"the worker returned no positive timings of the {label} on shape {shape}"
    return None
