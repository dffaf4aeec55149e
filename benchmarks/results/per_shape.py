"""Per shape: microseconds, GB/s and TFLOP/s of every method against eager and torch.compile.

The view a `triton.testing.perf_report` user reads: one line per (task, device, shape, dtype),
one column per provider. The providers are the two baselines (`benchmarks.results.baselines`:
the reference's median time under eager and torch.compile over the verdicts that timed it) and
each method's fastest correct kernel on that shape (rows that passed and were timed on a GPU).

Rates come from the task's own counts, recorded per shape in the verdict:

    GB/s     = bytes / time      bytes: the minimal bytes the operator must move (Task.min_bytes)
    TFLOP/s  = flops / time      flops: its semantic FLOPs (Task.flops)

so they are effective rates, comparable across providers of one shape, not what the hardware
counters would show. The roofline time of the shape (`roofline_us`) gives the speed of light
the same way. Rows written before the counts were kept beside the times take them from the full
verdict they carry; where neither has them the rate is None ("not recorded").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.results.rows import ResultRow

ShapeKey = tuple[str, str, str, str]  # task, device, shape, dtype
COUNTS = ("flops", "bytes", "roofline_us")


@dataclass
class ShapeLine:
    """One timed shape of one task on one device, and each provider's time on it."""

    task_id: str
    device: str
    shape: str
    dtype: str
    phase: str
    flops: float | None
    bytes: float | None
    roofline_us: float | None
    times_us: dict[str, float] = field(default_factory=dict)  # provider -> µs

    def gbps(self, us: float | None) -> float | None:
        """Effective bandwidth at `us` microseconds (GB/s), None without a byte count."""
        return self.bytes / us / 1e3 if self.bytes and us else None

    def tflops(self, us: float | None) -> float | None:
        """Effective FLOP rate at `us` microseconds (TFLOP/s), None without a FLOP count."""
        return self.flops / us / 1e6 if self.flops and us else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and value > 0 else None


def shape_numbers(row: ResultRow) -> list[dict[str, Any]]:
    """The row's per-shape numbers, with the counts (flops, bytes, roofline_us) filled in from
    the row's full verdict where the row itself has none (rows written before they were kept)."""
    from_verdict = {
        (str(s.get("shape")), str(s.get("dtype"))): s
        for s in (row.verdict or {}).get("shapes", [])
        if isinstance(s, dict)
    }
    out = []
    for s in row.shapes:
        full = from_verdict.get((str(s.get("shape")), str(s.get("dtype"))), {})
        counts = {k: s[k] if s.get(k) is not None else full.get(k) for k in COUNTS}
        out.append({**s, **counts})
    return out


def shape_lines(rows: Iterable[ResultRow], baselines: Iterable[ResultRow]) -> list[ShapeLine]:
    """Every timed shape with the baselines' times and each method's fastest correct time, in
    task, device, shape order. `baselines` are the eager and torch.compile rows of `rows`."""
    lines: dict[ShapeKey, ShapeLine] = {}

    def line(row: ResultRow, s: dict[str, Any]) -> ShapeLine:
        key = (row.task_id, row.device, str(s.get("shape")), str(s.get("dtype")))
        if key not in lines:
            lines[key] = ShapeLine(*key, str(s.get("phase") or ""), None, None, None)
        found = lines[key]
        found.flops = found.flops or _number(s.get("flops"))
        found.bytes = found.bytes or _number(s.get("bytes"))
        found.roofline_us = found.roofline_us or _number(s.get("roofline_us"))
        return found

    for b in baselines:
        for s in shape_numbers(b):
            if (t := _number(s.get("candidate_us"))) is not None:
                line(b, s).times_us[b.label()] = t
    for r in rows:
        if not (r.passed and r.perf_measured):
            continue
        for s in shape_numbers(r):
            t = _number(s.get("candidate_us"))
            if t is None:
                continue
            times = line(r, s).times_us
            times[r.label()] = min(t, times.get(r.label(), t))
    return [lines[k] for k in sorted(lines)]
