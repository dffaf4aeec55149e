"""Throughput: how many candidates a method gets judged per minute of its runs.

Read from the rows' clocks: `run_started` (the run's manifest) and `timestamp` (when each verdict
was written). Each run's clock runs from its start to its last row; a method's runs are laid end
to end in the order they started, so runs that ran side by side on several GPUs add up rather
than overlap, and a bench that interleaves methods does not charge one method for another's
time. A run whose start was not recorded (rows written before it was kept) starts at its first
row, which leaves out the time to its first verdict.

Imported rows are left out: their timestamps say when kernforge judged them, not when the other
system wrote them. So are the eager and torch.compile rows derived from the verdicts.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from benchmarks.results.rows import ResultRow

NOT_MEASURED = "not measured"


@dataclass
class Throughput:
    runs: int
    judged: int  # candidates judged ("no_kernel" rows are runs, not candidates)
    minutes: float  # the runs' clocks, added up
    per_minute: float | str  # judged / minutes, or why not
    first_correct_minutes: float | str  # median over runs with a correct kernel, or why not
    # the curve: minutes on the method's clock -> candidates judged so far
    minutes_at: list[float] = field(default_factory=list)
    judged_at: list[int] = field(default_factory=list)


def _when(stamp: str) -> datetime | None:
    """An ISO time (UTC when it names no zone), None when absent or unreadable."""
    try:
        when = datetime.fromisoformat(stamp) if stamp else None
    except ValueError:
        return None
    return when.replace(tzinfo=UTC) if when is not None and when.tzinfo is None else when


Run = tuple[datetime, list[tuple[datetime, ResultRow]]]  # start, (verdict time, row) in order


def _runs(rows: Iterable[ResultRow]) -> dict[str, list[Run]]:
    """Per method label, its runs (kernforge's own rows with a readable time), in start order."""
    found: dict[str, dict[tuple, list[tuple[datetime, ResultRow]]]] = {}
    for r in rows:
        when = _when(r.timestamp)
        if r.imported or r.source == "baseline" or when is None:
            continue
        key = (r.task_id, r.seed, r.device, r.run_id)
        found.setdefault(r.label(), {}).setdefault(key, []).append((when, r))
    out: dict[str, list[Run]] = {}
    for label, runs in found.items():
        ordered = []
        for key, group in runs.items():
            group.sort(key=lambda item: item[0])
            starts = [w for _, r in group if (w := _when(r.run_started)) is not None]
            ordered.append((min([*starts, group[0][0]]), key, group))
        out[label] = [(start, group) for start, _, group in sorted(ordered, key=lambda o: o[:2])]
    return out


def throughput(rows: Iterable[ResultRow]) -> dict[str, Throughput]:
    """Per method label (kernforge's own runs only): candidates judged, the runs' total time,
    candidates per minute, the median time to a run's first correct kernel, and the cumulative
    curve of candidates judged over the method's clock."""
    out = {}
    for label, runs in sorted(_runs(rows).items()):
        clock = 0.0  # minutes of this method's earlier runs
        xs, ys = [0.0], [0]
        first_correct: list[float] = []
        for start, group in runs:

            def minutes(when: datetime, start: datetime = start) -> float:
                return (when - start).total_seconds() / 60

            for when, r in group:
                if r.judged:
                    xs.append(clock + minutes(when))
                    ys.append(ys[-1] + 1)
            correct = [minutes(when) for when, r in group if r.passed]
            if correct:
                first_correct.append(min(correct))
            clock += minutes(group[-1][0])
        judged = ys[-1]
        per_minute: float | str
        median_first: float | str
        if clock <= 0:
            per_minute = median_first = f"{NOT_MEASURED} (the runs' clocks read no time)"
        else:
            per_minute = judged / clock
            median_first = (
                statistics.median(first_correct)
                if first_correct
                else f"{NOT_MEASURED} (no run found a correct kernel)"
            )
        out[label] = Throughput(
            len(runs), judged, clock, per_minute, median_first, [*xs, clock], [*ys, judged]
        )
    return out
