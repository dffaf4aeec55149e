"""Interleaved re-measurement: does a candidate really beat the incumbent, beyond the noise?

Both kernels (already judged correct) are timed in one child process, in the order
incumbent, candidate, candidate, incumbent per round and shape, so drift in clocks or temperature
hits both equally. The noise is how far repeated timings of the *same* code disagree; a gain
counts only when it is larger than that noise (and than `min_gain`).

On a machine without a GPU nothing is measured, and the result says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.harness.child import run_job
from benchmarks.harness.judge_config import REMEASURE_ROUNDS
from benchmarks.task import Task
from profiling.roofline import geomean


@dataclass
class Remeasure:
    measured: bool
    reason: str = ""
    incumbent_us: list[float] = field(default_factory=list)  # per shape: median of its timings
    candidate_us: list[float] = field(default_factory=list)
    shapes: list[str] = field(default_factory=list)
    gain: float = 0.0  # geomean over shapes of incumbent/candidate, minus 1
    noise: float = 0.0  # largest relative spread between repeated timings of the same code
    significant: bool = False


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
    return Remeasure(True, "", inc, cand, shapes, gain, noise, gain > max(noise, min_gain))


def interleaved(
    task: Task,
    incumbent_source: str,
    candidate_source: str,
    *,
    device: str = "cuda",
    rounds: int = REMEASURE_ROUNDS,
    seed: int = 0,
    timeout_s: float = 600.0,
    min_gain: float = 0.01,
) -> Remeasure:
    """Time both kernels A B B A per round on every GPU shape of `task`."""
    if device != "cuda":
        return Remeasure(False, "not measured (no GPU): timing needs a CUDA device")
    request = {
        "job": "remeasure",
        "task_path": str(task.path),
        "dtype": task.dtype,
        "device": "cuda",
        "incumbent_path": "{folder}/incumbent.py",
        "candidate_path": "{folder}/candidate.py",
        "shapes": [{"name": s.name, "dims": s.dims} for s in task.shapes],
        "rounds": rounds,
        "seed": seed,
    }
    files = {"incumbent.py": incumbent_source, "candidate.py": candidate_source}
    result = run_job("cuda", request, timeout_s=timeout_s, files=files)
    if result.get("status") != "ok":
        return Remeasure(False, f"re-measurement failed: {result.get('message', '')}")
    return summarize(result["times"], min_gain)
