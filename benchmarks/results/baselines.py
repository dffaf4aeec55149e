"""PyTorch eager and torch.compile as methods of their own, read off the verdicts already judged.

Every GPU verdict times the task's reference in eager mode and under torch.compile beside the
candidate, on the same shapes, in the same process. So each task that some method got timed on
also has the two baselines' times; this module turns them into result rows (`method` "eager" and
"torch.compile", `source` "baseline") that the speed tables and S_agg treat like any method.
"ahead of torch.compile" is then one table: the rows sit side by side.

For one task, a baseline row's shape has:
    time         the median over every timed row of that task of the baseline's time on the shape:
                 per call inside a CUDA graph where a verdict timed it so (decode shapes,
                 benchmarks/harness/graph_timing.py), else call by call (`timing` says which)
    attainment   roofline time / baseline time; the roofline time is the median of the verdicts'
                 `roofline_us` (or, in rows without it, attainment x candidate_us), so the
                 baselines are scored with the same roofline as the candidates
    counts       the shape's flops and bytes as the verdicts recorded them (for GB/s, TFLOP/s)
    speedups     eager_us / time and compile_us / time (eager's speedup over eager is 1)
and the row's score is the median attainment over shapes, as the judge scores a candidate
(`benchmarks.harness.perf`). A baseline is always correct (it is the reference). Correctness-only
shapes carry no times and stay out. Rows from scripted measurements make scripted baselines.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from benchmarks.results.per_shape import COUNTS, shape_numbers
from benchmarks.results.rows import ResultRow
from benchmarks.verdict import STAGE_ORDER
from profiling import roofline

BASELINES = {"eager": "eager_us", "torch.compile": "compile_us"}
# each baseline's time call by call and inside a CUDA graph, as the verdicts keep them; rows
# written before both were kept have only eager_us / compile_us (call by call)
TIMED_FIELDS = (
    "eager_us",
    "compile_us",
    "eager_call_us",
    "compile_call_us",
    "eager_graph_us",
    "compile_graph_us",
)


def _time(per: dict[str, list[float]], how: str, field: str) -> float | None:
    """The median of a baseline's times taken `how` ("graph" or "call"): `field` is eager_us
    or compile_us; call-by-call times from rows that kept only those fields count too."""
    if how == "graph":
        return _median(per[field.replace("_us", "_graph_us")])
    return _median(per[field.replace("_us", "_call_us")]) or _median(per[field])


BASELINE_SOURCE = "baseline"


def _shape_key(shape: dict) -> tuple[str, str]:
    return (str(shape.get("shape")), str(shape.get("dtype")))


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _task_baselines(task_rows: list[ResultRow]) -> list[ResultRow]:
    """The eager and torch.compile rows of one task, from its timed rows (may be empty)."""
    times: dict[tuple[str, str], dict[str, list[float]]] = {}
    roof: dict[tuple[str, str], list[float]] = {}
    meta: dict[tuple[str, str], dict] = {}
    for row in task_rows:
        for s in shape_numbers(row):
            key = _shape_key(s)
            meta.setdefault(key, s)
            for count in COUNTS:  # the first row that recorded it
                if meta[key].get(count) is None and s.get(count) is not None:
                    meta[key] = {**meta[key], count: s[count]}
            per = times.setdefault(key, {f: [] for f in TIMED_FIELDS})
            for field in per:
                if isinstance(s.get(field), int | float) and s[field] > 0:
                    per[field].append(float(s[field]))
            att, cand = s.get("attainment"), s.get("candidate_us")
            if isinstance(s.get("roofline_us"), int | float) and s["roofline_us"] > 0:
                roof.setdefault(key, []).append(float(s["roofline_us"]))
            elif isinstance(att, int | float) and isinstance(cand, int | float) and cand > 0:
                roof.setdefault(key, []).append(float(att) * float(cand))
    first = task_rows[0]
    out = []
    for method, field in BASELINES.items():
        shapes = []
        for key, per in times.items():
            # as served where some verdict timed the baselines inside a CUDA graph (decode)
            how = "graph" if per["eager_graph_us"] else "call"
            mine = _time(per, how, field)
            if mine is None:
                continue
            eager, comp = _time(per, how, "eager_us"), _time(per, how, "compile_us")
            t_roof = _median(roof.get(key, []))
            shapes.append(
                {
                    "shape": key[0],
                    "dtype": key[1],
                    "weight": meta[key].get("weight"),
                    "phase": meta[key].get("phase"),
                    "candidate_us": mine,
                    "eager_us": eager,
                    "compile_us": comp,
                    "speedup_eager": eager / mine if eager else None,
                    "speedup_compile": comp / mine if comp else None,
                    "attainment": roofline.attainment(t_roof, mine) if t_roof else None,
                    "launch_bound": meta[key].get("launch_bound"),
                    "flops": meta[key].get("flops"),
                    "bytes": meta[key].get("bytes"),
                    "roofline_us": t_roof,
                    "timing": how,
                }
            )
        if not shapes:
            continue
        eager_s = [s["speedup_eager"] for s in shapes if s["speedup_eager"]]
        comp_s = [s["speedup_compile"] for s in shapes if s["speedup_compile"]]
        att = [s["attainment"] for s in shapes if s["attainment"] is not None]
        out.append(
            ResultRow(
                task_id=first.task_id,
                category=first.category,
                method=method,
                model="",
                device=first.device,
                device_key=first.device_key,
                passed=True,
                stage_reached=STAGE_ORDER[-1].value,
                perf_measured=True,
                geomean_speedup_eager=roofline.geomean(eager_s) if eager_s else None,
                geomean_speedup_compile=roofline.geomean(comp_s) if comp_s else None,
                score=roofline.task_score(att) if att else None,
                shapes=shapes,
                scripted=any(r.scripted for r in task_rows),
                source=BASELINE_SOURCE,
                origin=f"the reference's times in {len(task_rows)} verdict(s)",
            )
        )
    return out


def baseline_rows(rows: Iterable[ResultRow]) -> list[ResultRow]:
    """Eager and torch.compile rows for every (task, device) some row timed on a GPU."""
    groups: dict[tuple[str, str], list[ResultRow]] = {}
    for row in rows:
        if row.source == BASELINE_SOURCE or not row.perf_measured:
            continue
        if not any(isinstance(s.get("eager_us"), int | float) for s in row.shapes):
            continue
        groups.setdefault((row.task_id, row.device_key or row.device), []).append(row)
    out: list[ResultRow] = []
    for key in sorted(groups):
        out.extend(_task_baselines(groups[key]))
    return out
