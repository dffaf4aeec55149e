"""The bench's cells: one (task, method, seed) each, run as an ordinary agent run.

`execute_cell` runs, resumes or skips a cell's run (any process may: the parallel workers do);
`collect_cell` reads a finished run's result rows into the bench's store (only the bench's one
writer does); `run_cell` is both, one after the other. `stored_outcomes` reads every cell's
outcome from the folder without running anything.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agents.bench.plan import EVENTS_FILE, RUNS, BenchPlan, Cell, skipped_methods
from agents.core.seams import Seams


@dataclass
class CellOutcome:
    """What became of one cell in one bench call (a line of events.jsonl, a line of output)."""

    cell: Cell
    # "ran", "resumed", "complete" (finished before this call), "stopped" (an error),
    # "deferred" (not started: the bench's deadline had passed; the same command continues it),
    # "busy" (not run: another process owns its run directory; the message names it)
    status: str
    message: str = ""
    attempts: int = 0
    correct: bool = False
    rows_added: int = 0
    seconds: float = 0.0


def bench_event(out: Path, kind: str, **fields: Any) -> None:
    """Append one event to the bench's events.jsonl, synced to disk (a kill loses no line,
    and a line torn by one is ended before the next)."""
    from benchmarks import append_line

    record = {"t": datetime.now(UTC).isoformat(timespec="seconds"), "event": kind, **fields}
    append_line(out / EVENTS_FILE, json.dumps(record, default=str))


def run_finished(run_dir: Path) -> bool:
    """A run whose finish node wrote its summary (a damaged summary: not finished, so the run
    is resumed and says what is wrong)."""
    from benchmarks import RunFileError, read_json

    path = run_dir / "summary.json"
    if not path.is_file():
        return False
    try:
        return bool(read_json(path).get("finished"))
    except RunFileError:
        return False


def _set_aside(run_dir: Path) -> None:
    """A run folder without a manifest (killed while being created): keep it aside, start anew."""
    if run_dir.exists():
        run_dir.rename(run_dir.with_name(f".{run_dir.name}.incomplete-{int(time.time())}"))


def cell_rows(run_dir: Path, cell: Cell) -> list[Any]:
    """The result rows of a finished run: one per attempt, or one "no_kernel" row (attempt 0)
    when it judged nothing, so a method that produced no kernel still counts
    (`benchmarks.rows_from_run_dir`; the cell names what the manifest does not)."""
    from benchmarks import rows_from_run_dir

    return rows_from_run_dir(run_dir, task_id=cell.task, method=cell.method, seed=cell.seed)


def run_cell(
    plan: BenchPlan,
    cell: Cell,
    store: Any,
    *,
    console: Any = None,
    verbose: bool = False,
    seams: Seams | None = None,
    executor: Any = None,
) -> CellOutcome:
    """Run (or resume, or skip) one (task, method, seed) and store its rows."""
    outcome = execute_cell(
        plan, cell, console=console, verbose=verbose, seams=seams, executor=executor
    )
    return collect_cell(plan, outcome, store)


def execute_cell(
    plan: BenchPlan,
    cell: Cell,
    *,
    console: Any = None,
    verbose: bool = False,
    seams: Seams | None = None,
    executor: Any = None,
) -> CellOutcome:
    """Run, resume or skip one cell's agent run; its rows are not read yet (`collect_cell`).
    Any process may do this part: the bench's workers run it, one per GPU. `seams` (tests
    only) go to the run unchanged; `executor` (the bench's, shared by its runs) judges the
    run's candidates, or None for the run's own from its settings."""
    from agents import api
    from agents.core.llm.base import LLMError
    from agents.core.lock import FolderLocked, hold

    runs_dir = plan.out / RUNS
    run_dir = runs_dir / cell.run_id
    started = time.monotonic()
    status = "complete"
    try:
        if run_finished(run_dir):
            pass
        elif (run_dir / "manifest.json").is_file():
            status = "resumed"
            api.resume(
                cell.run_id,
                runs_dir=runs_dir,
                console=console,
                quiet=not verbose,
                seams=seams,
                executor=executor,
            )
        else:
            status = "ran"
            if run_dir.exists():  # not while another process is creating it
                with hold(run_dir, "run", again=f"`kernforge run --resume {run_dir}`"):
                    _set_aside(run_dir)
            api.run(
                plan.task_ref(cell.task),
                llm=plan.llm_for(cell.method),
                method=cell.method,
                device=plan.device,
                runs_dir=runs_dir,
                seed=cell.seed,
                settings={**plan.budget, **plan.settings, "benchmark": plan.benchmark},
                run_id=cell.run_id,
                console=console,
                quiet=not verbose,
                seams=seams,
                executor=executor,
            )
    except FolderLocked as exc:
        return CellOutcome(cell, "busy", str(exc), seconds=_since(started))
    except (api.RunError, LLMError) as exc:
        return CellOutcome(cell, "stopped", str(exc).splitlines()[0], seconds=_since(started))
    except Exception as exc:  # noqa: BLE001 - one broken run must not end a long bench; reported
        return CellOutcome(cell, "stopped", f"{type(exc).__name__}: {exc}", seconds=_since(started))
    if not run_finished(run_dir):
        return CellOutcome(cell, "stopped", "the run did not finish", seconds=_since(started))
    return CellOutcome(cell, status, finish_reason(run_dir), seconds=_since(started))


def collect_cell(plan: BenchPlan, outcome: CellOutcome, store: Any) -> CellOutcome:
    """Add a finished cell's rows to `store` (the bench's one writer) and count them."""
    if outcome.status in ("stopped", "deferred", "busy"):
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
    from benchmarks import read_json

    return str(read_json(run_dir / "summary.json").get("finish_reason", ""))


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


def outcome_fields(outcome: CellOutcome) -> dict[str, Any]:
    """An outcome's fields for a "cell" event (the cell itself is named by its run id)."""
    data = asdict(outcome)
    data.pop("cell")
    return data
