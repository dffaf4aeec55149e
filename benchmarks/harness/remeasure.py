"""Interleaved re-measurement: does a candidate really beat the incumbent, beyond the noise?

Both kernels (already judged correct) are timed in one child process, in the order
incumbent, candidate, candidate, incumbent per round and shape, so drift in clocks or temperature
hits both equally. Decode shapes are timed as the judge scores them, per call of many captured
into one CUDA graph (benchmarks/harness/graph_timing.py), where both kernels can be captured.
The noise is how far repeated timings of the *same* code disagree, shape by shape; a candidate
is accepted when it is faster beyond that noise (and `min_gain`) on some shape, slower beyond it
on none, and faster overall by the shapes' importance weights (`summarize`).

On a machine without a GPU nothing is measured, and the result says so.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from benchmarks.harness.child import run_job
from benchmarks.harness.graph_timing import wants_graph
from benchmarks.harness.judge_config import REMEASURE_ROUNDS
from benchmarks.harness.messages import RemeasureJob, ShapeSpec
from benchmarks.harness.shapes import fresh_seed
from benchmarks.harness.sweep import weighted_score
from benchmarks.task import Task


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
    # geomean over shapes of incumbent/candidate, minus 1, weighted by the shapes' importance
    # where the caller gave weights (the score's weighting)
    gain: float = 0.0
    noise: float = 0.0  # largest relative spread between repeated timings of the same code
    # per shape (the order of `shapes`): incumbent/candidate - 1, and the spread of that shape's
    # repeated timings of the same code (the larger of the two kernels')
    shape_gain: list[float] = Field(default_factory=list)
    shape_noise: list[float] = Field(default_factory=list)
    significant: bool = False
    why: str = ""  # the acceptance rule's reading, one line
    scripted: bool = False  # True when a test seam produced it, not a GPU


def _spread(values: list[float]) -> float:
    return (max(values) - min(values)) / min(values) if len(values) > 1 else 0.0


def summarize(
    times: dict[str, dict[str, list[float]]],
    min_gain: float = 0.01,
    weights: dict[str, float] | None = None,
) -> Remeasure:
    """Gain and noise from interleaved timings ({"incumbent"|"candidate": {shape: [us, ...]}}).

    Each shape is read against its own noise (the spread of its repeated timings of the same
    code), since one noisy shape says nothing about another. The candidate is significantly
    faster when it is faster beyond its noise (and `min_gain`) on some shape, slower beyond its
    noise on none, and faster overall: the geomean gain over shapes, weighted by `weights`
    (shape -> importance; equal without), above `min_gain`."""
    shapes = list(times["incumbent"])
    inc = [sorted(times["incumbent"][s])[len(times["incumbent"][s]) // 2] for s in shapes]
    cand = [sorted(times["candidate"][s])[len(times["candidate"][s]) // 2] for s in shapes]
    noise_s = [max(_spread(times["incumbent"][s]), _spread(times["candidate"][s])) for s in shapes]
    gain_s = [i / c - 1.0 for i, c in zip(inc, cand, strict=True)]
    ratios = {s: i / c for s, i, c in zip(shapes, inc, cand, strict=True)}
    w = [float((weights or {}).get(s, 1.0)) for s in shapes]
    gain = weighted_score(ratios, shapes, w) - 1.0  # the sweep's weighting (equal without)
    faster = [s for s, g, n in zip(shapes, gain_s, noise_s, strict=True) if g > max(n, min_gain)]
    slower = [
        s
        for s, i, c, n in zip(shapes, inc, cand, noise_s, strict=True)
        if c / i - 1.0 > max(n, min_gain)
    ]
    significant = bool(faster) and not slower and gain > min_gain
    if slower:
        why = f"slower beyond its noise on {', '.join(slower)}"
    elif not faster:
        why = "faster beyond its noise on no shape"
    elif gain <= min_gain:
        why = f"faster beyond its noise on {', '.join(faster)}, but {gain:+.2%} overall"
    else:
        why = f"faster beyond its noise on {', '.join(faster)}, slower on none, {gain:+.2%} overall"
    return Remeasure(
        measured=True,
        incumbent_us=inc,
        candidate_us=cand,
        shapes=shapes,
        gain=gain,
        noise=max(noise_s, default=0.0),
        shape_gain=gain_s,
        shape_noise=noise_s,
        significant=significant,
        why=why,
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
    triton_cache_seed: str = "",
) -> Remeasure:
    """Time both kernels A B B A per round on every GPU shape of `task`, on inputs of `seed`
    (default: a fresh one, so neither kernel can have its answers ready). `triton_cache_seed`:
    a folder of both kernels compiled ahead (an executor's CPU stage), copied into the worker."""
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
    result = run_job(
        "cuda", job, timeout_s=timeout_s, files=files, triton_cache_seed=triton_cache_seed
    )
    if result.failed:
        return Remeasure(measured=False, reason=f"re-measurement failed: {result.message}")
    problem = _unusable(result.times)
    if problem:
        return Remeasure(measured=False, reason=f"re-measurement failed: {problem}")
    return summarize(result.times, min_gain, {s.name: s.weight for s in task.shapes})


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
