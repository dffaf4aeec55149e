"""The bench's cells: one (task, method, seed) each, run as an ordinary agent run.

`execute_cell` runs, resumes or skips a cell's run (any process may: the parallel workers do);
`collect_cell` reads a finished run's result rows into the bench's store (only the bench's one
writer does); `run_cell` is both, one after the other. `stored_outcomes` reads every cell's
outcome from the folder without running anything.
"""

from __future__ import annotations

import json
import os
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
    # "deferred" (not started: the bench's deadline had passed; the same command continues it)
    status: str
    message: str = ""
    attempts: int = 0
    correct: bool = False
    rows_added: int = 0
    seconds: float = 0.0


def bench_event(out: Path, kind: str, **fields: Any) -> None:
    """Append one event to the bench's events.jsonl, synced to disk (a kill loses no line)."""
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
    from benchmarks import (
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
    seams: Seams | None = None,
) -> CellOutcome:
    """Run (or resume, or skip) one (task, method, seed) and store its rows."""
    outcome = execute_cell(plan, cell, console=console, verbose=verbose, seams=seams)
    return collect_cell(plan, outcome, store)


def execute_cell(
    plan: BenchPlan,
    cell: Cell,
    *,
    console: Any = None,
    verbose: bool = False,
    seams: Seams | None = None,
) -> CellOutcome:
    """Run, resume or skip one cell's agent run; its rows are not read yet (`collect_cell`).
    Any process may do this part: the bench's workers run it, one per GPU. `seams` (tests
    only) go to the run unchanged."""
    from agents import api
    from agents.core.llm.base import LLMError

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
                cell.run_id, runs_dir=runs_dir, console=console, quiet=not verbose, seams=seams
            )
        else:
            status = "ran"
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


def outcome_fields(outcome: CellOutcome) -> dict[str, Any]:
    """An outcome's fields for a "cell" event (the cell itself is named by its run id)."""
    data = asdict(outcome)
    data.pop("cell")
    return data
