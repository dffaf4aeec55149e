"""The bench: methods compared on a suite, each (task, method, seed) an ordinary agent run.

    kernforge bench --suite lite --methods aka,geak,kernelagent,single-shot --llm SPEC \\
                    --seeds 3 --budget iterations=8,cost=2 --out runs/bench-lite

Every method gets the same model (--llm), the same budget and the same --set settings; only its
preset differs (presets sit below flags, so a --set key overrides every method's preset alike).
The offline policy is a method of its own: it always runs without a model, and with
`--llm offline` the methods that need one are skipped, with a message saying so. Runs use hidden
provenance (benchmark mode) unless --no-benchmark: no method sees the task's own solution.

    <out>/bench.json                  the plan: tasks, methods, seeds, model, budget, settings
    <out>/events.jsonl                one line per (task, method, seed) as it starts and ends
    <out>/runs/<task>.<method>.s<seed>/   the agent run (`kernforge run --resume` works on it)
    <out>/results.jsonl, results.parquet  one row per (task, method, seed, attempt)
                                      (benchmarks.results.rows.ResultStore; rows of a run that
                                      judged nothing: one "no_kernel" row with attempt 0)

Resumable: a (task, method, seed) whose run finished is skipped (its rows are added if missing);
one whose run started but did not finish is resumed from its checkpoint; one not started starts.
So a killed bench continues when the same command runs again (or `--resume --out DIR`, which
reads the plan from bench.json). A re-run must use the same model, budget, settings and device
as the rows already there; more tasks, methods or seeds may be added. Rows from the replay
provider are labelled scripted (ResultRow.scripted), everywhere they appear.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agents.core.presets import NEEDS_MODEL, PRESETS
from agents.core.rundir import write_json_atomic
from agents.core.settings import BY_KEY, SettingsError, convert, parse_budget

PLAN_FILE = "bench.json"
EVENTS_FILE = "events.jsonl"
RUNS = "runs"
DEFAULT_MODEL_METHODS = ("aka", "geak", "kernelagent", "single-shot")
# settings the bench sets itself for each run, so --set may not
BENCH_KEYS = ("llm", "method", "seed", "runs_dir", "device", "benchmark")
# what every row of one bench folder must share for the comparison to be fair
FAIRNESS = ("llm", "budget", "settings", "device", "benchmark")


class BenchError(ValueError):
    """A bench that cannot start as asked (unknown method or task, a conflicting folder, ...)."""


@dataclass(frozen=True)
class Cell:
    """One agent run of the bench."""

    task: str
    method: str
    seed: int

    @property
    def run_id(self) -> str:
        return f"{self.task}.{self.method}.s{self.seed}"


@dataclass
class BenchPlan:
    out: Path
    suite: str | None  # None when the tasks were listed by id
    tasks: list[str]
    methods: list[str]
    seeds: list[int]
    llm: str
    budget: dict[str, Any] = field(default_factory=dict)  # dotted budget keys -> typed value
    settings: dict[str, Any] = field(default_factory=dict)  # --set KEY=VALUE, typed
    device: str = "auto"
    benchmark: bool = True

    def cells(self) -> list[Cell]:
        """Task by task, then seed, then method: a partial bench compares methods early."""
        return [Cell(t, m, s) for t in self.tasks for s in self.seeds for m in self.methods]

    def llm_for(self, method: str) -> str:
        return "offline" if method not in NEEDS_MODEL else self.llm

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["out"] = str(self.out)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BenchPlan:
        known = set(cls.__dataclass_fields__)
        values = {k: v for k, v in data.items() if k in known}
        values["out"] = Path(values["out"])
        return cls(**values)


@dataclass
class CellOutcome:
    cell: Cell
    # "ran", "resumed", "complete" (finished before this call), "stopped" (an error),
    # "deferred" (not started: the bench's deadline had passed; the same command continues it)
    status: str
    message: str = ""
    attempts: int = 0
    correct: bool = False
    rows_added: int = 0
    seconds: float = 0.0


@dataclass
class MethodSummary:
    """A method's line in the bench summary (rows labelled "<method> [scripted]" stay apart)."""

    label: str
    tasks: int
    tasks_correct: int  # tasks with a correct kernel in at least one seed
    runs: int
    runs_correct: int
    pass_rates: dict[str, float]  # stage title -> share of runs whose best attempt passed it
    geomean_eager: float | str  # a number, or "not measured (why)"
    geomean_compile: float | str


@dataclass
class BenchResult:
    plan: BenchPlan
    outcomes: list[CellOutcome]
    summary: list[MethodSummary]
    skipped_methods: dict[str, str]  # method -> why
    warnings: list[str] = field(default_factory=list)

    @property
    def stopped(self) -> list[CellOutcome]:
        return [o for o in self.outcomes if o.status == "stopped"]

    @property
    def deferred(self) -> list[CellOutcome]:
        return [o for o in self.outcomes if o.status == "deferred"]


# --------------------------------------------------------------------------------------------
# The plan
# --------------------------------------------------------------------------------------------


def _split(text: str | list[str] | None) -> list[str]:
    if text is None:
        return []
    items = text if isinstance(text, list) else text.split(",")
    return [i.strip() for i in items if i.strip()]


def _absolute_replay(spec: str) -> str:
    kind, sep, rest = spec.partition(":")
    if kind == "replay" and sep:
        return f"replay:{Path(rest).expanduser().resolve()}"
    return spec


def _check_llm(spec: str) -> None:
    from agents.core.llm.base import LLMError
    from agents.core.llm.factory import make_provider

    try:
        make_provider(spec)
    except (ValueError, LLMError) as exc:
        raise BenchError(f"--llm {spec}: {exc}") from None


def _typed_settings(items: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in items.items():
        if key not in BY_KEY:
            raise BenchError(f"--set {key}: unknown setting; known: {', '.join(BY_KEY)}")
        if key in BENCH_KEYS:
            raise BenchError(
                f"--set {key}: the bench sets {key} for each run itself "
                "(use --llm, --methods, --seeds, --device, --benchmark/--no-benchmark)"
            )
        if key.startswith("budget."):
            raise BenchError(f"--set {key}: give budgets with --budget, e.g. --budget iterations=8")
        try:
            out[key] = convert(BY_KEY[key], value, f"--set {key}")
        except SettingsError as exc:
            raise BenchError(str(exc)) from None
    return out


def make_plan(
    out: str | Path,
    *,
    suite: str | None = "lite",
    tasks: str | list[str] | None = None,
    methods: str | list[str] | None = None,
    seeds: int = 1,
    llm: str | None = None,
    budget: str | Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    device: str = "auto",
    benchmark: bool = True,
) -> BenchPlan:
    """A checked plan. `tasks` (ids) replaces the suite's tasks; `methods` defaults to the
    model-driven presets, or to `offline` when there is no model."""
    from benchmarks.suites import is_folder_suite, suite_tasks

    if suite and is_folder_suite(suite):
        raise BenchError(
            f"--suite {suite}: a folder of task files is not benched yet (the agent writes "
            "native entry points); judge its files with `kernforge eval --task FILE` and list "
            "them with `kernforge tasks list --suite FOLDER`"
        )
    from agents.core.llm.factory import default_spec
    from benchmarks.results.rows import all_tasks

    spec = _absolute_replay((llm or default_spec()).strip())
    _check_llm(spec)
    names = _split(methods) or (["offline"] if spec == "offline" else list(DEFAULT_MODEL_METHODS))
    unknown = [m for m in names if m not in PRESETS]
    if unknown:
        raise BenchError(f"unknown method(s) {', '.join(unknown)}; available: {', '.join(PRESETS)}")
    known = all_tasks()
    ids = _split(tasks)
    if ids:
        missing = [t for t in ids if t not in known]
        if missing:
            raise BenchError(
                f"unknown task id(s) {', '.join(missing)} (see `kernforge tasks list`)"
            )
        suite = None
    else:
        try:
            ids = [t.id for t in suite_tasks(suite or "lite", known)]
        except KeyError as exc:
            raise BenchError(str(exc.args[0])) from None
        if not ids:
            raise BenchError(f"suite {suite} has no tasks in this checkout")
    if seeds < 1:
        raise BenchError(f"--seeds must be >= 1, got {seeds}")
    if device not in BY_KEY["device"].choices:
        raise BenchError(
            f"--device {device}: expected one of {', '.join(BY_KEY['device'].choices)}"
        )
    try:
        parsed = parse_budget(budget) if isinstance(budget, str) else dict(budget or {})
    except SettingsError as exc:
        raise BenchError(str(exc)) from None
    typed_budget: dict[str, Any] = {}
    for key, value in parsed.items():
        key = key if key.startswith("budget.") else f"budget.{key}"
        if key not in BY_KEY:
            raise BenchError(f"--budget: unknown budget {key!r}")
        try:
            typed_budget[key] = convert(BY_KEY[key], value, "--budget")
        except SettingsError as exc:
            raise BenchError(str(exc)) from None
    return BenchPlan(
        out=Path(out),
        suite=suite,
        tasks=ids,
        methods=list(dict.fromkeys(names)),
        seeds=list(range(seeds)),
        llm=spec,
        budget=typed_budget,
        settings=_typed_settings(settings or {}),
        device=device,
        benchmark=benchmark,
    )


def stored_plan(out: str | Path) -> BenchPlan | None:
    """The plan saved in `out`/bench.json, or None where there is none."""
    path = Path(out) / PLAN_FILE
    if not path.is_file():
        return None
    try:
        return BenchPlan.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, TypeError, KeyError) as exc:
        raise BenchError(f"{path}: not a bench plan ({exc})") from None


def merge_with_stored(plan: BenchPlan) -> BenchPlan:
    """Check `plan` against the bench already in its folder and return what bench.json should
    hold: the union of tasks, methods and seeds. A different model, budget, settings or device
    would mix incomparable rows in one folder: that is an error."""
    stored = stored_plan(plan.out)
    if stored is None:
        return plan
    differ = [k for k in FAIRNESS if getattr(stored, k) != getattr(plan, k)]
    if differ:
        lines = "; ".join(
            f"{k}: {getattr(stored, k)!r} there, {getattr(plan, k)!r} now" for k in differ
        )
        raise BenchError(
            f"{plan.out} holds a bench run with other settings ({lines}). Rows of different "
            "models or budgets must not be mixed: use another --out, or the same settings"
        )
    return BenchPlan(
        out=plan.out,
        suite=plan.suite if plan.suite == stored.suite else None,
        tasks=list(dict.fromkeys([*stored.tasks, *plan.tasks])),
        methods=list(dict.fromkeys([*stored.methods, *plan.methods])),
        seeds=sorted({*stored.seeds, *plan.seeds}),
        llm=plan.llm,
        budget=plan.budget,
        settings=plan.settings,
        device=plan.device,
        benchmark=plan.benchmark,
    )


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------


def bench_event(out: Path, kind: str, **fields: Any) -> None:
    record = {"t": datetime.now(UTC).isoformat(timespec="seconds"), "event": kind, **fields}
    with (out / EVENTS_FILE).open("a", encoding="utf-8") as f:
        f.write(json.dumps(record, default=str) + "\n")
        f.flush()
        os.fsync(f.fileno())


def run_finished(run_dir: Path) -> bool:
    """A run whose finish node wrote its summary."""
    path = run_dir / "summary.json"
    if not path.is_file():
        return False
    try:
        return bool(json.loads(path.read_text(encoding="utf-8")).get("finished"))
    except ValueError:
        return False


def _set_aside(run_dir: Path) -> None:
    """A run folder without a manifest (killed while being created): keep it aside, start anew."""
    if run_dir.exists():
        run_dir.rename(run_dir.with_name(f".{run_dir.name}.incomplete-{int(time.time())}"))


def cell_rows(run_dir: Path, cell: Cell) -> list[Any]:
    """The result rows of a finished run: one per attempt, or one "no_kernel" row (attempt 0)
    when it judged nothing, so a method that produced no kernel still counts."""
    from benchmarks.results.rows import (
        category_of,
        device_name,
        is_scripted_llm,
        no_kernel_row,
        rows_from_run_dir,
    )

    rows = rows_from_run_dir(run_dir)
    if rows:
        return rows
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    llm = str(manifest.get("llm") or manifest.get("config", {}).get("llm", ""))
    # the device the run would have judged on (its manifest's fingerprint), not the row default
    fingerprint = manifest.get("fingerprint") or {
        "device": (manifest.get("device") or {}).get("resolved", "cpu")
    }
    return [
        no_kernel_row(
            cell.task,
            category=category_of(cell.task),
            method=cell.method,
            reason=f"no kernel judged: {finish_reason(run_dir) or 'unknown'}",
            model=llm,
            seed=cell.seed,
            attempt=0,
            run_id=run_dir.name,
            device=device_name(fingerprint),
            device_key=str(fingerprint.get("key", "")),
            scripted=is_scripted_llm(llm),
            origin=f"{run_dir.name}/summary.json",
        )
    ]


def run_cell(
    plan: BenchPlan,
    cell: Cell,
    store: Any,
    *,
    console: Any = None,
    verbose: bool = False,
    scripted_measure: Callable[..., Any] | None = None,
    open_kb: Callable[[], Any] | None = None,
) -> CellOutcome:
    """Run (or resume, or skip) one (task, method, seed) and store its rows."""
    outcome = execute_cell(
        plan,
        cell,
        console=console,
        verbose=verbose,
        scripted_measure=scripted_measure,
        open_kb=open_kb,
    )
    return collect_cell(plan, outcome, store)


def execute_cell(
    plan: BenchPlan,
    cell: Cell,
    *,
    console: Any = None,
    verbose: bool = False,
    scripted_measure: Callable[..., Any] | None = None,
    open_kb: Callable[[], Any] | None = None,
) -> CellOutcome:
    """Run, resume or skip one cell's agent run; its rows are not read yet (`collect_cell`).
    Any process may do this part: the bench's workers run it, one per GPU."""
    from agents import api
    from agents.core.llm.base import LLMError

    runs_dir = plan.out / RUNS
    run_dir = runs_dir / cell.run_id
    started = time.monotonic()
    seams = {"scripted_measure": scripted_measure, "open_kb": open_kb}
    status = "complete"
    try:
        if run_finished(run_dir):
            pass
        elif (run_dir / "manifest.json").is_file():
            status = "resumed"
            api.resume(cell.run_id, runs_dir=runs_dir, console=console, quiet=not verbose, **seams)
        else:
            status = "ran"
            _set_aside(run_dir)
            api.run(
                cell.task,
                llm=plan.llm_for(cell.method),
                method=cell.method,
                device=plan.device,
                runs_dir=runs_dir,
                seed=cell.seed,
                settings={**plan.budget, **plan.settings, "benchmark": plan.benchmark},
                run_id=cell.run_id,
                console=console,
                quiet=not verbose,
                **seams,
            )
    except (api.RunError, LLMError) as exc:
        return CellOutcome(cell, "stopped", str(exc).splitlines()[0], seconds=_since(started))
    except Exception as exc:  # noqa: BLE001 - one broken run must not end a long bench; reported
        return CellOutcome(cell, "stopped", f"{type(exc).__name__}: {exc}", seconds=_since(started))
    if not run_finished(run_dir):
        return CellOutcome(cell, "stopped", "the run did not finish", seconds=_since(started))
    return CellOutcome(cell, status, finish_reason(run_dir), seconds=_since(started))


def collect_cell(plan: BenchPlan, outcome: CellOutcome, store: Any) -> CellOutcome:
    """Add a finished cell's rows to `store` (the bench's one writer) and count them."""
    if outcome.status in ("stopped", "deferred"):
        return outcome
    rows = cell_rows(plan.out / RUNS / outcome.cell.run_id, outcome.cell)
    outcome.rows_added = store.extend(rows)
    return _counted(outcome, rows)


def _counted(outcome: CellOutcome, rows: list[Any]) -> CellOutcome:
    """`outcome` with its run's judged attempts counted and whether one was correct."""
    outcome.attempts = sum(r.error_class != "no_kernel" for r in rows)
    outcome.correct = any(r.passed for r in rows)
    return outcome


def finish_reason(run_dir: Path) -> str:
    """Why a finished run stopped, from its summary."""
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    return str(summary.get("finish_reason", ""))


def stored_outcomes(plan: BenchPlan) -> list[CellOutcome]:
    """Each cell's outcome as its folder holds it now, running nothing: "complete" for a
    finished run (with its attempts and verdict), "deferred" for one not finished."""
    outcomes = []
    skipped = skipped_methods(plan)
    for cell in (c for c in plan.cells() if c.method not in skipped):
        run_dir = plan.out / RUNS / cell.run_id
        if not run_finished(run_dir):
            outcomes.append(CellOutcome(cell, "deferred", "not finished in any call so far"))
            continue
        outcome = CellOutcome(cell, "complete", finish_reason(run_dir))
        outcomes.append(_counted(outcome, cell_rows(run_dir, cell)))
    return outcomes


def _since(started: float) -> float:
    return round(time.monotonic() - started, 2)


def skipped_methods(plan: BenchPlan) -> dict[str, str]:
    """Methods that need a model when the bench has none: method -> why it is skipped."""
    if plan.llm != "offline":
        return {}
    return {
        m: f"method {m} needs a model and --llm is offline: skipped "
        "(the offline policy is its own method: --methods offline)"
        for m in plan.methods
        if m in NEEDS_MODEL
    }


def run_bench(
    plan: BenchPlan,
    *,
    console: Any = None,
    verbose: bool = False,
    on_cell: Callable[[int, int, CellOutcome], None] | None = None,
    scripted_measure: Callable[..., Any] | None = None,
    open_kb: Callable[[], Any] | None = None,
    deadline: float | None = None,
    workers: int = 1,
) -> BenchResult:
    """Run every cell of `plan` not yet complete, store the rows, and summarise by method.
    `workers` > 1 runs cells in that many processes, one per GPU on CUDA
    (`agents.bench.parallel`); the seams must then be picklable.
    `scripted_measure` and `open_kb` are the agent's test seams (never set from the CLI).
    `deadline` (a `time.monotonic()` value): no cell starts after it; the rest are "deferred",
    and running the same plan again continues with them."""
    from benchmarks.results.rows import ResultStore

    if workers < 1:
        raise BenchError(f"--workers must be >= 1, got {workers}")
    plan.out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(plan.out / PLAN_FILE, merge_with_stored(plan).to_json())
    store = ResultStore(plan.out)
    skipped = skipped_methods(plan)
    cells = [c for c in plan.cells() if c.method not in skipped]
    bench_event(
        plan.out,
        "bench_start",
        cells=len(cells),
        skipped_methods=sorted(skipped),
        workers=workers,
    )
    outcomes: list[CellOutcome] = []
    if workers > 1:
        from agents.bench.parallel import run_parallel

        def counted(outcome: CellOutcome) -> None:
            outcomes.append(outcome)
            if on_cell is not None:
                on_cell(len(outcomes), len(cells), outcome)

        run_parallel(
            plan,
            cells,
            store,
            workers,
            on_outcome=counted,
            deadline=deadline,
            scripted_measure=scripted_measure,
            open_kb=open_kb,
        )
    else:
        for number, cell in enumerate(cells, start=1):
            if (
                deadline is not None
                and time.monotonic() >= deadline
                and not run_finished(plan.out / RUNS / cell.run_id)
            ):
                outcome = CellOutcome(
                    cell, "deferred", "not started: the bench's deadline had passed"
                )
                outcomes.append(outcome)
                if on_cell is not None:
                    on_cell(number, len(cells), outcome)
                continue
            bench_event(plan.out, "cell_start", run_id=cell.run_id)
            outcome = run_cell(
                plan,
                cell,
                store,
                console=console,
                verbose=verbose,
                scripted_measure=scripted_measure,
                open_kb=open_kb,
            )
            outcomes.append(outcome)
            bench_event(plan.out, "cell", run_id=cell.run_id, **outcome_fields(outcome))
            if on_cell is not None:
                on_cell(number, len(cells), outcome)
    store.write_parquet()
    mine = [
        r
        for r in store.rows()
        if r.task_id in plan.tasks and r.method in plan.methods and r.seed in plan.seeds
    ]
    bench_event(
        plan.out,
        "bench_end",
        stopped=sum(o.status == "stopped" for o in outcomes),
        deferred=sum(o.status == "deferred" for o in outcomes),
    )
    return BenchResult(plan, outcomes, summarize(mine), skipped, list(store.warnings))


def outcome_fields(outcome: CellOutcome) -> dict[str, Any]:
    data = asdict(outcome)
    data.pop("cell")
    return data


# --------------------------------------------------------------------------------------------
# The summary
# --------------------------------------------------------------------------------------------


def summarize(rows: list[Any]) -> list[MethodSummary]:
    """Per method label: tasks and runs with a correct kernel, stage pass rates over run
    outcomes, and geomean speedups over the correct ones (or why they are not measured)."""
    from benchmarks.results.analysis import (
        PASS_STAGES,
        STAGE_TITLES,
        final_rows,
        geomean_speedups,
        labels,
        stage_pass_rates,
    )

    finals = final_rows(rows)
    rates = stage_pass_rates(rows)
    speeds = geomean_speedups(rows)
    out = []
    for label in labels(finals):
        mine = [r for r in finals if r.label() == label]
        out.append(
            MethodSummary(
                label=label,
                tasks=len({r.task_id for r in mine}),
                tasks_correct=len({r.task_id for r in mine if r.passed}),
                runs=len(mine),
                runs_correct=sum(r.passed for r in mine),
                pass_rates={STAGE_TITLES[s]: rates[label][s].rate for s in PASS_STAGES},
                geomean_eager=speeds[label].eager,
                geomean_compile=speeds[label].compile,
            )
        )
    return out
