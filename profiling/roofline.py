"""Roofline arithmetic and scores: pure functions, no device, no torch.

Units are SI throughout: FLOPs, bytes, seconds, FLOP/s, bytes/s (microseconds only where a
name says `_us`). Each function is pinned by a unit test to a hand-computed value.

    t_roof      = max(flops / peak_flops, bytes / bandwidth)       the speed of light for a shape
    attainment  = t_roof / t_meas                                   1.0 means at the roofline
    iou         = (bytes / t_meas) / bandwidth                      achieved share of bandwidth
    mfu         = (flops / t_meas) / peak_flops                     achieved share of peak FLOP/s
    task score  = median over a task's shapes of attainment
    suite score = sum_i w_i * S_i, with the weights normalised to sum to 1
    fast_p      = share of tasks that are correct AND have speedup > p   (KernelBench)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal


def _positive(name: str, value: float) -> None:
    if not value > 0 or math.isinf(value):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")


def _non_negative(name: str, value: float) -> None:
    if not value >= 0 or math.isinf(value):
        raise ValueError(f"{name} must be a non-negative finite number, got {value!r}")


def roofline_time_s(flops: float, bytes: float, peak_flops: float, bandwidth: float) -> float:
    """The shortest time the shape can take: max(flops / peak_flops, bytes / bandwidth)."""
    _non_negative("flops", flops)
    _non_negative("bytes", bytes)
    _positive("peak_flops", peak_flops)
    _positive("bandwidth", bandwidth)
    return max(flops / peak_flops, bytes / bandwidth)


def attainment(t_roof: float, t_meas: float) -> float:
    """Fraction of the speed of light reached: t_roof / t_meas (above 1 means impossible)."""
    _non_negative("t_roof", t_roof)
    _positive("t_meas", t_meas)
    return t_roof / t_meas


def iou(bytes: float, t_meas: float, bandwidth: float) -> float:
    """Achieved bandwidth as a share of the peak: (bytes / t_meas) / bandwidth."""
    _non_negative("bytes", bytes)
    _positive("t_meas", t_meas)
    _positive("bandwidth", bandwidth)
    return bytes / t_meas / bandwidth


def mfu(flops: float, t_meas: float, peak_flops: float) -> float:
    """Achieved FLOP/s as a share of the peak: (flops / t_meas) / peak_flops."""
    _non_negative("flops", flops)
    _positive("t_meas", t_meas)
    _positive("peak_flops", peak_flops)
    return flops / t_meas / peak_flops


def is_impossible(t_meas: float, t_roof: float, slack: float = 0.95) -> bool:
    """True when the measured time beats the roofline by more than the calibration noise.

    A time below `slack * t_roof` is a timing bug, an undercounted FLOP/byte formula, a
    mis-calibrated peak, or a cheat (cached results, skipped work); the judge flags it.
    """
    _positive("t_meas", t_meas)
    _non_negative("t_roof", t_roof)
    if not 0 < slack <= 1:
        raise ValueError(f"slack must be in (0, 1], got {slack!r}")
    return t_meas < slack * t_roof


def bound(
    flops: float, bytes: float, peak_flops: float, bandwidth: float
) -> Literal["memory", "compute"]:
    """Which roof limits the shape: arithmetic intensity (flops/bytes) vs the ridge point.

    The ridge point is peak_flops / bandwidth (FLOPs per byte). At or above it: "compute".
    """
    _non_negative("flops", flops)
    _non_negative("bytes", bytes)
    _positive("peak_flops", peak_flops)
    _positive("bandwidth", bandwidth)
    if bytes == 0:
        return "compute"
    return "compute" if flops / bytes >= peak_flops / bandwidth else "memory"


def task_score(attainments: Sequence[float]) -> float:
    """A task's score: the median of its per-shape attainments."""
    values = sorted(float(a) for a in attainments)
    if not values:
        raise ValueError("task_score needs at least one shape's attainment")
    mid = len(values) // 2
    if len(values) % 2:
        return values[mid]
    return (values[mid - 1] + values[mid]) / 2.0


def suite_score(task_scores: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """Weighted suite score: sum_i w_i * S_i with the weights normalised to sum to 1.

    Every scored task needs a weight and every weight a score: a task that failed should be
    passed with a score of 0, never dropped (dropping it would raise the suite's score).
    """
    if not task_scores:
        raise ValueError("suite_score needs at least one task score")
    missing = sorted(set(task_scores) - set(weights))
    if missing:
        raise ValueError(f"no weight for task(s): {', '.join(missing)}")
    unscored = sorted(set(weights) - set(task_scores))
    if unscored:
        raise ValueError(
            f"weight given but no score for task(s): {', '.join(unscored)} "
            "(score a failed task as 0 rather than leaving it out)"
        )
    for task, w in weights.items():
        _non_negative(f"weight of {task}", w)
    total = sum(weights.values())
    if total <= 0:
        raise ValueError("suite_score weights sum to zero")
    return sum(weights[t] * task_scores[t] for t in task_scores) / total


def fast_p(speedups: Sequence[float | None], correct: Sequence[bool], p: float) -> float:
    """KernelBench's fast_p: the share of tasks that are correct AND have speedup > p.

    `speedups[i]` may be None for a task with no timing (it then cannot count).
    """
    if len(speedups) != len(correct):
        raise ValueError(f"{len(speedups)} speedups but {len(correct)} correctness flags")
    if not speedups:
        raise ValueError("fast_p needs at least one task")
    hits = sum(1 for s, ok in zip(speedups, correct, strict=True) if ok and s is not None and s > p)
    return hits / len(speedups)


def geomean(values: Sequence[float]) -> float:
    """Geometric mean of positive values (the usual mean of speedups)."""
    if not values:
        raise ValueError("geomean needs at least one value")
    for v in values:
        _positive("geomean value", v)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def launch_bound(t_meas_us: float, launch_floor_us: float, factor: float = 2.0) -> bool:
    """True when the measured time is within `factor` x the empty-kernel launch floor.

    Such a shape is limited by launching, not by its kernel's work: report it as launch-bound
    beside its (pure-roofline) attainment, so decode shapes are not read as slow kernels.
    """
    _positive("t_meas_us", t_meas_us)
    _positive("launch_floor_us", launch_floor_us)
    _positive("factor", factor)
    return t_meas_us <= factor * launch_floor_us
