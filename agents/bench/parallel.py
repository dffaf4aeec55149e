"""The bench's cells on several workers at once: one process per GPU, or N processes on the CPU.

    kernforge bench --suite lite --methods offline --llm offline --workers 2   # two GPUs

A worker is a fresh (spawned) Python process. On CUDA each is pinned to its own GPU before torch
starts (CUDA_VISIBLE_DEVICES: the i-th GPU this process may see), so no two workers time kernels
on one GPU; asking for more workers than GPUs is an error, never a silent share. Workers take
whole tasks (all of a task's methods and seeds, in plan order), so a task's baselines are timed
once per worker's cache and a partial bench still compares methods task by task.

Workers only run the agent; this process is the bench's one writer: it reads each finished run's
rows (`agents.bench.cells.collect_cell`) into the result store as the run ends, and writes the "cell"
events. A worker that dies leaves its cells "stopped" with the exit code; running the same
command again resumes them from their checkpoints, like any bench.
"""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import os
import queue
import time
from collections.abc import Callable
from typing import Any

from agents.bench.cells import (
    CellOutcome,
    bench_event,
    collect_cell,
    execute_cell,
    outcome_fields,
    run_finished,
)
from agents.bench.plan import RUNS, BenchError, BenchPlan, Cell
from agents.core.seams import Seams

POLL_S = 1.0


def gpu_slots(count: int) -> list[str]:
    """The CUDA_VISIBLE_DEVICES value of each of `count` workers: the GPUs this process may
    see, one each. More workers than GPUs is a BenchError (shared GPUs would skew timings)."""
    from benchmarks import visible_gpus

    ids = visible_gpus()
    if count > len(ids):
        raise BenchError(
            f"--workers {count}: this machine shows {len(ids)} GPU(s); one worker per GPU at "
            "most, since two workers timing kernels on one GPU would skew each other's numbers"
        )
    return ids[:count]


def task_groups(cells: list[Cell]) -> list[list[Cell]]:
    """The cells grouped by task, in plan order."""
    groups: dict[str, list[Cell]] = {}
    for cell in cells:
        groups.setdefault(cell.task, []).append(cell)
    return list(groups.values())


def _worker(
    slot: str | None,
    plan_json: dict[str, Any],
    jobs: Any,
    results: Any,
    deadline_wall: float | None,
    seams: Seams | None,
    spec: Any = None,
    share: int = 1,
) -> None:
    """One worker of `share`: take a task's cells at a time until the queue is empty. With
    `spec` (an ExecutorSpec) its runs share one executor of that kind, built here. The workers
    split each model provider's limits (llm.concurrency, llm.rpm, llm.tpm) evenly."""
    from agents.core.llm.concurrency import split_between

    split_between(share)
    if slot is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = slot
    plan = BenchPlan.from_json(plan_json)
    executor = None
    try:
        if spec is not None:
            from benchmarks import make_executor

            executor = make_executor(spec)
        while (group := jobs.get()) is not None:
            for task, method, seed in group:
                cell = Cell(task, method, seed)
                done = run_finished(plan.out / RUNS / cell.run_id)
                if deadline_wall is not None and time.time() >= deadline_wall and not done:
                    outcome = CellOutcome(
                        cell, "deferred", "not started: the bench's deadline had passed"
                    )
                else:
                    results.put(("start", slot, (task, method, seed)))
                    outcome = execute_cell(plan, cell, seams=seams, executor=executor)
                results.put(("outcome", slot, _plain(outcome)))
    except KeyboardInterrupt:
        return  # the bench was interrupted: the run is left to resume, the parent says so
    finally:
        from benchmarks import drain_spares

        if executor is not None:
            executor.close()
        drain_spares()  # a spawned process skips atexit: end the judge's spare workers here


def _plain(outcome: CellOutcome) -> dict[str, Any]:
    c = outcome.cell
    return {
        "cell": (c.task, c.method, c.seed),
        "status": outcome.status,
        "message": outcome.message,
        "seconds": outcome.seconds,
    }


def run_parallel(
    plan: BenchPlan,
    cells: list[Cell],
    store: Any,
    workers: int,
    *,
    on_outcome: Callable[[CellOutcome], None],
    deadline: float | None = None,
    seams: Seams | None = None,
    spec: Any = None,
    on_start: Callable[[Cell], None] | None = None,
) -> list[CellOutcome]:
    """Run `cells` on `workers` processes (one per GPU on CUDA) and store each finished run's
    rows as it ends. `deadline` is a `time.monotonic()` value, as in `run_bench`. The `seams`
    (tests only) must be picklable (module-level functions or objects): each worker gets a copy.
    `spec` (an ExecutorSpec) gives each worker an executor of that kind; with "ray" the workers
    are not pinned to GPUs (Ray hands the GPUs out), and without an address this process starts
    the local Ray they all join. `on_start` is called as a worker starts a cell's run."""
    from benchmarks import resolve_device

    on_ray = spec is not None and spec.kind == "ray"
    # on Ray the GPUs are the cluster's: the workers are not pinned, and need none of their own
    pinned = not on_ray and resolve_device(plan.device) == "cuda"
    slots: list[str | None] = list(gpu_slots(workers)) if pinned else [None] * workers
    local_ray = None
    if on_ray and spec.ray_address is None:
        from benchmarks import ExecutorError, make_executor

        try:
            local_ray = make_executor(spec)
        except ExecutorError as exc:
            raise BenchError(f"--executor ray: {exc}") from None
        spec = dataclasses.replace(spec, ray_address=local_ray.address())
    ctx = mp.get_context("spawn")
    jobs, results = ctx.Queue(), ctx.Queue()
    for group in task_groups(cells):
        jobs.put([(c.task, c.method, c.seed) for c in group])
    for _ in slots:
        jobs.put(None)  # one "no more work" per worker
    deadline_wall = None if deadline is None else time.time() + (deadline - time.monotonic())
    procs = [
        ctx.Process(
            target=_worker,
            args=(slot, plan.to_json(), jobs, results, deadline_wall, seams, spec, len(slots)),
            name=f"bench-worker-{slot if slot is not None else i}",
        )
        for i, slot in enumerate(slots)
    ]
    for proc in procs:
        proc.start()
    outcomes: dict[Cell, CellOutcome] = {}
    try:
        while True:
            try:
                kind, slot, data = results.get(timeout=POLL_S)
            except queue.Empty:
                if all(not p.is_alive() for p in procs):
                    try:  # the last messages may still be in the pipe
                        kind, slot, data = results.get(timeout=POLL_S)
                    except queue.Empty:
                        break
                else:
                    continue
            if kind == "start":
                cell = Cell(*data)
                bench_event(plan.out, "cell_start", run_id=cell.run_id, worker=slot)
                if on_start is not None and not run_finished(plan.out / RUNS / cell.run_id):
                    on_start(cell)
                continue
            cell = Cell(*data["cell"])
            outcome = CellOutcome(cell, data["status"], data["message"], seconds=data["seconds"])
            outcome = collect_cell(plan, outcome, store)
            outcomes[cell] = outcome
            if outcome.status != "deferred":
                bench_event(
                    plan.out, "cell", run_id=cell.run_id, worker=slot, **outcome_fields(outcome)
                )
            on_outcome(outcome)
    except KeyboardInterrupt:
        for proc in procs:
            proc.join(timeout=30)  # they got the signal too: let them leave their runs resumable
        raise
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
            proc.join(timeout=10)
        if local_ray is not None:
            local_ray.close()
    lost = [c for c in cells if c not in outcomes]
    codes = ", ".join(f"{p.name} exit {p.exitcode}" for p in procs if p.exitcode)
    for cell in lost:
        why = f"not finished: its bench worker ended ({codes or 'no exit code'})"
        outcome = CellOutcome(cell, "stopped", why)
        outcomes[cell] = outcome
        bench_event(plan.out, "cell", run_id=cell.run_id, status="stopped", message=why)
        on_outcome(outcome)
    return [outcomes[c] for c in cells]
