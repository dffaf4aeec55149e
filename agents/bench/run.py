"""The bench's loop: every cell of a plan run (serially or on parallel workers), rows stored,
and a summary by method.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agents.bench.cells import CellOutcome, bench_event, outcome_fields, run_cell, run_finished
from agents.bench.parallel import run_parallel
from agents.bench.plan import (
    PLAN_FILE,
    RUNS,
    BenchError,
    BenchPlan,
    Cell,
    merge_with_stored,
    skipped_methods,
)
from agents.core.lock import FolderLocked, hold
from agents.core.rundir import write_json_atomic
from agents.core.seams import Seams


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
    """What one bench call did: each cell's outcome and the summary of every row it holds."""

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

    @property
    def busy(self) -> list[CellOutcome]:
        """Cells not run because another process owns their run directory."""
        return [o for o in self.outcomes if o.status == "busy"]


def executor_spec(
    kind: str | None, ray_address: str | None = None, settings: Mapping[str, Any] | None = None
) -> Any:
    """The bench's shared executor (a `benchmarks.ExecutorSpec`) from `kind` (judge.executor's
    choices) and `ray_address`, sized by the settings (judge.lanes, judge.compile_workers, with
    the plan's `settings` over them); None when neither is given (`run_bench` then shares
    `shared_executor_spec`). A `ray_address` alone means ray."""
    from agents.core.settings import resolve

    if kind is None and ray_address is None:
        return None
    return _spec(kind or "ray", ray_address, resolve(dict(settings or {})).values)


def shared_executor_spec(settings: Mapping[str, Any] | None = None) -> Any:
    """The executor a one-worker bench shares when no `--executor` is given: judge.executor's
    own kind and size, with `settings` (the plan's `--set` values) over the defaults."""
    from agents.core.settings import resolve

    values = resolve(dict(settings or {})).values
    return _spec(values["judge.executor"], None, values)


def _spec(kind: str, ray_address: str | None, values: Mapping[str, Any]) -> Any:
    from agents.core.settings import BY_KEY
    from benchmarks import ExecutorSpec

    choices = BY_KEY["judge.executor"].choices
    if kind not in choices:
        from benchmarks import unknown_name

        raise BenchError(f"--executor: {unknown_name('executor', kind, choices)}")
    if ray_address is not None and kind != "ray":
        raise BenchError(f"--ray-address goes with --executor ray, not --executor {kind}")
    return ExecutorSpec(
        kind,
        lanes=values["judge.lanes"],
        compile_workers=values["judge.compile_workers"],
        ray_address=ray_address or values["judge.ray_address"],
    )


def run_bench(
    plan: BenchPlan,
    *,
    console: Any = None,
    verbose: bool = False,
    on_cell: Callable[[int, int, CellOutcome], None] | None = None,
    seams: Seams | None = None,
    deadline: float | None = None,
    workers: int = 1,
    executor: Any = None,
    on_start: Callable[[Cell], None] | None = None,
) -> BenchResult:
    """Run every cell of `plan` not yet complete, store the rows, and summarise by method.
    `workers` > 1 runs cells in that many processes, one per GPU on CUDA
    (`agents.bench.parallel`); the seams must then be picklable.
    `seams` are the agent's test seams (agents/core/seams.py; never set from the CLI).
    `deadline` (a `time.monotonic()` value): no cell starts after it; the rest are "deferred",
    and running the same plan again continues with them. One process at a time owns the bench
    folder: a second is a BenchError naming the first (agents/core/lock.py).
    `executor` (a `benchmarks.ExecutorSpec`): every run judges its candidates on one shared
    executor of that kind (one per worker with `workers` > 1); without it, one worker shares
    one of the settings' kind (judge.executor) and each of several workers' runs builds its
    own. Where candidates are judged never changes a verdict, so it is not part of the plan.
    `on_start` is called as each cell's run starts (`on_cell` when it ends)."""
    if workers < 1:
        raise BenchError(f"--workers must be >= 1, got {workers}")
    again = f"`kernforge bench --resume --out {plan.out}`"
    try:
        with hold(plan.out, "bench folder", again=again):
            return _run_bench(
                plan, console, verbose, on_cell, seams, deadline, workers, executor, on_start
            )
    except FolderLocked as exc:
        if exc.folder != plan.out:
            raise  # not the bench folder: a cell's own, which `execute_cell` reports
        raise BenchError(str(exc)) from None


def _run_bench(
    plan: BenchPlan,
    console: Any,
    verbose: bool,
    on_cell: Callable[[int, int, CellOutcome], None] | None,
    seams: Seams | None,
    deadline: float | None,
    workers: int,
    executor: Any,
    on_start: Callable[[Cell], None] | None,
) -> BenchResult:
    from benchmarks import ResultStore

    write_json_atomic(plan.out / PLAN_FILE, merge_with_stored(plan).to_json())
    store = ResultStore(plan.out)
    skipped = skipped_methods(plan)
    cells = [c for c in plan.cells() if c.method not in skipped]
    if executor is None and workers == 1:
        # one executor for every run (judge.executor's kind, with the plan's settings): its
        # lanes, compile workers and their spare processes stay warm from one task to the next
        # (each run building its own paid their start, and waited for them, every time)
        executor = shared_executor_spec(plan.settings)
    spec = dataclasses.replace(executor, device=plan.device) if executor is not None else None
    shared = None
    if spec is not None and workers == 1:
        from benchmarks import ExecutorError, make_executor

        try:
            shared = make_executor(spec)
        except ExecutorError as exc:
            raise BenchError(f"--executor {spec.kind}: {exc}") from None
    bench_event(
        plan.out,
        "bench_start",
        cells=len(cells),
        skipped_methods=sorted(skipped),
        workers=workers,
        executor=shared.describe() if shared else (spec.kind if spec else "per run"),
    )
    try:
        outcomes = _run_cells(
            plan,
            cells,
            store,
            workers,
            console,
            verbose,
            (on_start, on_cell),
            seams,
            deadline,
            spec,
            shared,
        )
    finally:
        if shared is not None:
            shared.close()
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


def _run_cells(
    plan: BenchPlan,
    cells: list[Any],
    store: Any,
    workers: int,
    console: Any,
    verbose: bool,
    hooks: tuple[Callable[[Cell], None] | None, Callable[[int, int, CellOutcome], None] | None],
    seams: Seams | None,
    deadline: float | None,
    spec: Any,
    shared: Any,
) -> list[CellOutcome]:
    """Every cell run, in this process one after the other (judged on `shared`, or each run's
    own executor), or on `workers` processes (each with an executor of `spec`). `hooks`:
    (on_start, on_cell) of `run_bench`."""
    on_start, on_cell = hooks
    outcomes: list[CellOutcome] = []
    if workers > 1:

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
            seams=seams,
            spec=spec,
            on_start=on_start,
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
            if on_start is not None and not run_finished(plan.out / RUNS / cell.run_id):
                on_start(cell)
            outcome = run_cell(
                plan, cell, store, console=console, verbose=verbose, seams=seams, executor=shared
            )
            outcomes.append(outcome)
            bench_event(plan.out, "cell", run_id=cell.run_id, **outcome_fields(outcome))
            if on_cell is not None:
                on_cell(number, len(cells), outcome)
    return outcomes


# --------------------------------------------------------------------------------------------
# The summary
# --------------------------------------------------------------------------------------------


def summarize(rows: list[Any]) -> list[MethodSummary]:
    """Per method label: tasks and runs with a correct kernel, stage pass rates over run
    outcomes, and geomean speedups over the correct ones (or why they are not measured)."""
    from benchmarks import (
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
