"""The report's sections and tables, as plain text cells that the templates render to HTML and
Markdown (`benchmarks.results.report`). Each section names its plots (`report_plots`) and its
tables; every figure in a table comes from `benchmarks.results.analysis`, and a figure the rows
do not support reads "not measured" with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from benchmarks.harness.ptx import FEATURES
from benchmarks.results.analysis import (
    BEST_SO_FAR_FLOOR,
    NOT_MEASURED,
    PASS_STAGES,
    STAGE_TITLES,
    Analysis,
    is_measured,
    labels,
)
from benchmarks.results.per_shape import ShapeLine

SCRIPTED_NOTE = (
    "Rows labelled [scripted] come from the replay provider (or scripted measurements): their kernels "
    "were served from a script, not written by a model, and show how the pipeline behaves, not how good a model is."
)
IMPORTED_NOTE = (
    "Rows labelled (imported) are kernels another system wrote, judged here by `kernforge import`; "
    "they sit beside kernforge's own runs (a preset of the same name stays a separate method)."
)
MISSING = "—"


def fmt(value: Any, digits: int = 2) -> str:
    if is_measured(value):
        return f"{value:.{digits}f}"
    if value is None:
        return MISSING
    return str(value)


def count(value: int | None) -> str:
    return MISSING if value is None else str(value)


def rate(value: float | None) -> str:
    """GB/s or TFLOP/s: four significant digits (rates span 0.01 to thousands)."""
    return MISSING if value is None else f"{value:.4g}"


def pct(value: float) -> str:
    return f"{100 * value:.0f}%"


@dataclass
class Table:
    """A table as text: its header and rows. `key` is its HTML id; a long table gets a filter box."""

    key: str
    head: list[str]
    rows: list[list[str]]
    caption: str = ""
    filter: bool = False


@dataclass
class Section:
    key: str
    heading: str
    text: str
    plots: list[str]
    tables: list[Table]
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Provenance
# --------------------------------------------------------------------------------------------


def provenance(a: Analysis, sources: list[str]) -> list[tuple[str, str]]:
    rows = a.rows
    stamps = sorted(r.timestamp for r in rows if r.timestamp)
    models = sorted({f"{r.label()}: {r.model or 'unknown model'}" for r in rows})
    devices = sorted({r.device for r in rows})
    scripted = sum(r.scripted for r in rows)
    nothing = [r for r in a.finals if not r.judged]
    items = [
        (
            "rows",
            f"{len(rows)} rows, {len(a.finals)} run outcomes (task x method x seed x device x run)"
            + (f", {len(nothing)} of them judged nothing (counted as failures)" if nothing else ""),
        ),
        ("tasks", str(len({r.task_id for r in rows}))),
        ("methods", ", ".join(a.methods)),
        ("models", "; ".join(models)),
        ("devices", ", ".join(devices)),
        ("sources of rows", ", ".join(sorted({r.source for r in rows}))),
        (
            "scripted rows",
            f"{scripted} of {len(rows)}"
            + (" — labelled [scripted] everywhere" if scripted else ""),
        ),
        ("dates", f"{stamps[0]} … {stamps[-1]}" if stamps else MISSING),
        ("read from", "; ".join(sources) if sources else MISSING),
        ("written", datetime.now(UTC).isoformat(timespec="seconds")),
    ]
    flagged = [r for r in rows if "impossible_time" in r.flags]
    if flagged:
        items.append(
            (
                "impossible times",
                f"{len(flagged)} row(s) timed faster than the roofline allows (flag impossible_time): a timing bug, "
                "an undercounted formula or a cheat; their speedups are included above, see the flags column",
            )
        )
    if not any(r.perf_measured for r in rows):
        items.append(
            (
                "speed",
                "not measured: no row was timed on a GPU (the CPU interpreter checks correctness only)",
            )
        )
    return items


# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------


def stage_table(a: Analysis) -> Table:
    head = [
        "method",
        "outcomes",
        "judged nothing",
        *[STAGE_TITLES[s] for s in PASS_STAGES],
    ]
    body = []
    for m in a.methods:
        rates = a.stage_rates[m]
        total = rates[PASS_STAGES[0]].total
        nothing = sum(1 for r in a.finals if r.label() == m and not r.judged)
        body.append(
            [
                m,
                str(total),
                str(nothing),
                *[f"{pct(rates[s].rate)} ({rates[s].hits}/{rates[s].total})" for s in PASS_STAGES],
            ]
        )
    return Table("stage-table", head, body)


def speed_table(a: Analysis) -> Table:
    head = [
        "method",
        "correct / outcomes",
        "geomean speedup vs eager",
        "geomean speedup vs torch.compile",
        "fast_1 (eager)",
        "fast_2 (eager)",
        "S_agg (serving suite)",
        "serving coverage",
    ]
    body = []
    for m in a.speed_methods:
        g = a.speedups[m]
        curve = a.fast_p_eager[m]

        def at(p: float, curve: Any = curve) -> str:
            if curve.values is None:
                return curve.reason
            return fmt(curve.values[curve.ps.index(p)])

        s = a.s_agg[m]
        cover = f"{len(s.covered)} of {len(s.covered) + len(s.missing)} tasks"
        body.append(
            [
                m,
                f"{g.correct}/{g.total}",
                fmt(g.eager),
                fmt(g.compile),
                at(1.0),
                at(2.0),
                fmt(s.value, 3),
                cover,
            ]
        )
    return Table("speed-table", head, body)


def task_table(a: Analysis) -> Table:
    head = [
        "task",
        "category",
        "device",
        "method",
        "correct / outcomes",
        "best speedup vs eager",
        "best speedup vs torch.compile",
        "S",
        "best S on task",
    ]
    body = [
        [
            e.task_id,
            e.category,
            e.device,
            e.method,
            f"{e.correct}/{e.total}",
            fmt(e.speedup_eager),
            fmt(e.speedup_compile),
            fmt(e.score, 3),
            "best" if e.best else "",
        ]
        for e in a.tasks
    ]
    return Table("task-table", head, body, filter=True)


def _providers(a: Analysis) -> list[str]:
    """Columns of the per-shape tables: eager, torch.compile, then the methods with a time."""
    timed = {p for line in a.shapes for p in line.times_us}
    base = [b for b in labels(a.baselines) if b in timed]
    return base + [m for m in a.methods if m in timed]


def _shape_table(
    a: Analysis, key: str, unit: str, value: Callable[[ShapeLine, float | None], str]
) -> Table:
    providers = _providers(a)
    head = ["task", "device", "shape", "dtype", "phase", f"roofline {unit}"]
    head += [f"{p} {unit}" for p in providers]
    body = []
    for line in a.shapes:
        cells = [line.task_id, line.device, line.shape, line.dtype, line.phase]
        cells.append(value(line, line.roofline_us))
        cells += [value(line, line.times_us.get(p)) for p in providers]
        body.append(cells)
    return Table(key, head, body, caption=unit, filter=True)


def shape_tables(a: Analysis) -> list[Table]:
    """µs, then GB/s and TFLOP/s where some shape recorded its bytes / FLOPs."""
    if not a.shapes:
        why = f"{NOT_MEASURED} (no correct kernel or reference was timed on a GPU)"
        return [Table("shape-us", ["per shape"], [[why]])]
    tables = [_shape_table(a, "shape-us", "µs", lambda _line, us: fmt(us))]
    if any(line.bytes for line in a.shapes):
        tables.append(_shape_table(a, "shape-gbps", "GB/s", lambda ln, us: rate(ln.gbps(us))))
    if any(line.flops for line in a.shapes):
        tables.append(
            _shape_table(a, "shape-tflops", "TFLOP/s", lambda ln, us: rate(ln.tflops(us)))
        )
    return tables


def shape_notes(a: Analysis) -> list[str]:
    missing = [
        unit
        for unit, have in (("GB/s", "bytes"), ("TFLOP/s", "flops"))
        if a.shapes and not any(getattr(line, have) for line in a.shapes)
    ]
    if not missing:
        return []
    return [
        f"{' and '.join(missing)}: not recorded (no row of these shapes carries the task's "
        "byte / FLOP counts: rows and verdicts written before they were kept)"
    ]


def category_table(a: Analysis) -> Table:
    cats = sorted({c for c, _ in a.table})
    head = ["category", *a.methods]
    body = []
    for c in cats:
        cells = []
        for m in a.methods:
            cell = a.table.get((c, m))
            cells.append(
                MISSING
                if cell is None
                else f"{cell.solved}/{cell.total} correct; speedup {fmt(cell.geomean_eager)}"
            )
        body.append([c, *cells])
    return Table("category-table", head, body)


def variance_table(a: Analysis) -> Table:
    v = a.variance
    head = ["share of variance in correctness explained by", "eta²"]
    body = [
        ["category", fmt(v.category)],
        ["method", fmt(v.method)],
        ["category x method cells", fmt(v.cells)],
        ["interaction", fmt(v.interaction) if v.balanced else "n/a (unbalanced design)"],
        ["residual (tasks within category, seeds)", fmt(v.residual)],
    ]
    return Table("variance-table", head, body)


def iteration_table(a: Analysis) -> Table:
    head = [
        "method",
        "iteration",
        "attempts",
        "compile rate",
        "correct share",
        "runs solved so far",
        "best speedup so far (eager)",
    ]
    body = []
    for m, pts in a.iterations.items():
        for p in pts:
            body.append(
                [
                    m,
                    str(p.iteration),
                    str(p.attempts),
                    pct(p.compile_rate),
                    pct(p.correct_rate),
                    pct(p.solved_share),
                    fmt(p.best_speedup),
                ]
            )
    return Table("iteration-table", head, body, filter=len(body) > 20)


def throughput_table(a: Analysis) -> Table:
    head = [
        "method",
        "runs",
        "candidates judged",
        "run time (min)",
        "candidates per minute",
        "median minutes to a run's first correct kernel",
    ]
    body = [
        [
            m,
            str(t.runs),
            str(t.judged),
            fmt(t.minutes, 1),
            fmt(t.per_minute),
            fmt(t.first_correct_minutes, 1),
        ]
        for m, t in a.throughput.items()
    ]
    if not body:
        body = [[f"{NOT_MEASURED} (no row of kernforge's own runs)", "", "", "", "", ""]]
    return Table("throughput-table", head, body)


def repair_table(a: Analysis) -> Table:
    head = [
        "method",
        "rescued by repair",
        "correct at first try",
        "revisions of correct kernels",
        "speedup (rescued)",
        "speedup (first try)",
        "rescued / first try",
    ]
    body = [
        [
            m,
            str(r.rescued),
            str(r.first_try),
            str(r.descended),
            fmt(r.rescued_speedup),
            fmt(r.first_try_speedup),
            fmt(r.ratio),
        ]
        for m, r in a.repair.items()
    ]
    return Table("repair-table", head, body)


def portability_table(a: Analysis) -> Table:
    p = a.portability
    if p.reason:
        return Table("portability-table", ["portability"], [[p.reason]])
    head = ["task", "method", *p.devices, "max/min"]
    body = [
        [e.task_id, e.method, *[fmt(e.speedups.get(d)) for d in p.devices], fmt(e.ratio)]
        for e in p.entries
    ]
    body += [
        ["all tasks (geomean)", m, *["" for _ in p.devices], fmt(v)] for m, v in p.by_method.items()
    ]
    return Table("portability-table", head, body)


def feature_table(a: Analysis) -> Table:
    head = ["method", "correct kernels with PTX", "without PTX", *FEATURES]
    body = [
        [
            m,
            str(f.kernels),
            str(f.without_ptx),
            *[pct(v) if is_measured(v) else str(v) for v in f.shares.values()],
        ]
        for m, f in a.features.items()
    ]
    return Table("feature-table", head, body)


def rows_table(a: Analysis) -> Table:
    head = [
        "task",
        "category",
        "method",
        "scripted",
        "model",
        "seed",
        "attempt",
        "iteration",
        "parent",
        "device",
        "passed",
        "stage reached",
        "error",
        "speedup eager",
        "speedup compile",
        "S",
        "flags",
        "time",
        "came from",
        "origin",
    ]
    body = []
    for r in sorted(a.rows, key=lambda r: (r.task_id, r.scripted, r.method, r.seed, r.attempt)):
        untimed = NOT_MEASURED if not r.perf_measured else MISSING
        body.append(
            [
                r.task_id,
                r.category,
                r.label(),
                "scripted" if r.scripted else "",
                r.model,
                str(r.seed),
                str(r.attempt),
                count(r.iteration),
                count(r.parent_attempt),
                r.device,
                "yes" if r.passed else "no",
                r.stage_reached or "nothing",
                r.error_class,
                fmt(r.geomean_speedup_eager) if r.geomean_speedup_eager is not None else untimed,
                fmt(r.geomean_speedup_compile)
                if r.geomean_speedup_compile is not None
                else untimed,
                fmt(r.score, 3) if r.score is not None else untimed,
                ", ".join(r.flags),
                r.timestamp,
                r.came_from or (f"imported ({r.source})" if r.source != "kernforge" else ""),
                r.origin or r.run_id,
            ]
        )
    return Table("rows-table", head, body, filter=True)


# --------------------------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------------------------


def sections(a: Analysis) -> list[Section]:
    """The report's sections in order, each with its text, plot names and tables."""
    variance_notes = [f"{a.variance.note} (n = {a.variance.n})"] if a.variance.note else []
    return [
        Section(
            "stages",
            "Stage pass rates",
            "Share of run outcomes (the best attempt of each run: task x method x seed x device) that "
            "passed each stage of the judge. A run that judged nothing (no kernel, no verdict) is an "
            "outcome too, a failed one: it is counted in every denominator and shown in its own column.",
            ["stage_pass_rates"],
            [stage_table(a)],
        ),
        Section(
            "speed",
            "Speed",
            "Geometric mean speedups are over the correct outcomes; fast_p is the share of all outcomes that are correct and faster "
            "than the baseline by more than p (KernelBench); S_agg = Σ w_i S_i / Σ w_i over the serving-suite tasks present, with S_i "
            "the median roofline attainment over shapes (0 when incorrect) and w_i the serving weights of benchmarks/weights.py. "
            "Eager and torch.compile are rows of their own, from the reference's times in the same verdicts.",
            ["fast_p_eager", "fast_p_compile"],
            [speed_table(a)],
        ),
        Section(
            "tasks",
            "Per task",
            "For each task and device, each method over its run outcomes there: correct outcomes, the best correct "
            "speedup over eager and over torch.compile, and S (the best median roofline attainment, 0 when none is "
            "correct). The highest S on the task is marked best; eager and torch.compile compete too.",
            [],
            [task_table(a)],
        ),
        Section(
            "shapes",
            "Per shape",
            "One line per timed shape, one column per provider: the reference under eager and torch.compile (median "
            "over the verdicts that timed it) and the fastest correct kernel of each method; roofline is the shape's "
            "speed of light on the device. GB/s = minimal bytes / time and TFLOP/s = semantic FLOPs / time, from the "
            f"task's own counts (effective rates, not hardware counters). {MISSING}: no correct timed kernel on that "
            "shape, or no count recorded.",
            [],
            shape_tables(a),
            shape_notes(a),
        ),
        Section(
            "categories",
            "Category x method",
            "Correct outcomes over outcomes, and the geomean speedup over eager of the correct ones.",
            ["category_method"],
            [category_table(a)],
        ),
        Section(
            "variance",
            "What explains correctness",
            "eta² = SS_between / SS_total of the pass indicator (1 correct, 0 not) over run outcomes, for each factor.",
            [],
            [variance_table(a)],
            variance_notes,
        ),
        Section(
            "iterations",
            "Iteration curves",
            "Per evaluator round: share of that round's judged attempts that compile and that are correct; share of "
            "the method's runs with a correct kernel so far. Best speedup so far is defined on the fixed set of all "
            "the method's runs, so it never falls: per run, the best of eager "
            f"({BEST_SO_FAR_FLOOR:.1f}, the floor a run sits at until it has a correct kernel faster than eager) "
            "and every correct kernel timed up to that round; the curve is the geomean over runs. Series that "
            "coincide are drawn in different line styles and markers and named in the legend.",
            [
                "iteration_compile_rate",
                "iteration_correct_rate",
                "iteration_solved_share",
                "iteration_best_speedup",
            ],
            [iteration_table(a)],
        ),
        Section(
            "throughput",
            "Throughput",
            "Candidates judged over run time, per method: each run's clock runs from its start (its manifest) to its "
            "last verdict, and a method's runs are laid end to end, so the slope is candidates judged per minute of "
            "the method's runs (parallel runs add up; interleaved methods are not charged for each other's time). "
            "Imported rows are left out: their clocks say when kernforge judged them.",
            ["throughput"],
            [throughput_table(a)],
        ),
        Section(
            "repair",
            "Repair bias",
            "Correct attempts with a failed ancestor (rescued by repair) against correct attempts with no parent (first try): "
            "geomean speedup over eager of each, and their ratio (below 1: rescued kernels are slower).",
            [],
            [repair_table(a)],
        ),
        Section(
            "portability",
            "Portability",
            "Best correct speedup over eager per GPU, and max/min across GPUs (1.0 = as good everywhere).",
            ["portability"],
            [portability_table(a)],
        ),
        Section(
            "features",
            "Hardware features (compiled PTX)",
            "Share of correct kernels whose PTX uses wgmma, TMA (cp.async.bulk.tensor), bulk copies, mma.sync, cp.async, 128-bit loads.",
            ["hardware_features"],
            [feature_table(a)],
        ),
        Section(
            "rows",
            "Every row",
            "One row per judged kernel, and one (error no_kernel) per run that judged nothing. Click a column's "
            "header to sort by it; type in the box to keep the rows holding every word typed.",
            [],
            [rows_table(a)],
        ),
    ]
