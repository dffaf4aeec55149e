"""`kernforge bench`: methods compared on a suite, same model and same budget (agents/bench/).

Mount with `app.command("bench")(bench)`.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agents.cli.console import console, err_console, print_json, step
from agents.cli.options import parse_set
from agents.core.settings import BY_KEY

if TYPE_CHECKING:
    from agents.bench import BenchPlan, BenchResult, Cell, CellOutcome

EXECUTOR, RAY_ADDRESS = BY_KEY["judge.executor"], BY_KEY["judge.ray_address"]

STATUS_STYLE = {
    "ran": "green",
    "resumed": "cyan",
    "complete": "dim",
    "stopped": "bold red",
    "deferred": "yellow",
    "busy": "bold red",
}


def _die(message: str, code: int = 2) -> None:
    err_console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(code)


# stage pass-rate columns: agents.bench.MethodSummary.pass_rates title -> column
STAGE_COLUMNS = {
    "runs (call)": "call",
    "correct (standard inputs)": "correct",
    "correct (outlier inputs)": "outliers",
    "no PyTorch fallback": "no fallback",
}


def _speed(value: float | str) -> str:
    return f"{value:.2f}x" if isinstance(value, float) else "-"


def bench(
    suite: str = typer.Option(None, "--suite", help="full, lite, quant or serving (default lite)"),
    methods: str = typer.Option(
        None,
        "--methods",
        help="comma-separated presets: aka, geak, kernelagent, single-shot, offline "
        "(default: the four model-driven ones, or offline without a model)",
    ),
    llm: str = typer.Option(
        None,
        "--llm",
        help="the one model every method uses: offline | openai:MODEL | anthropic:MODEL | "
        "openai-compatible:URL#MODEL | replay:FILE (default: a provider whose key is set, else offline)",
    ),
    seeds: int = typer.Option(
        None, "--seeds", help="runs per (task, method): seeds 0..N-1 (default 1)"
    ),
    budget: str = typer.Option(
        None,
        "--budget",
        help="per run, the same for every method: iterations=N,tokens=N,cost=USD,wall=S,gpu=S",
    ),
    device: str = typer.Option(
        None, "--device", help="cuda, cpu (Triton interpreter) or auto (default)"
    ),
    out: Path = typer.Option(None, "--out", help="bench folder (default runs/bench-<suite>)"),
    tasks: str = typer.Option(
        None, "--tasks", help="comma-separated task ids, instead of the suite's"
    ),
    set_: list[str] = typer.Option(
        None, "--set", help="KEY=VALUE for every run, e.g. --set judge.trials=3 (repeatable)"
    ),
    benchmark: bool = typer.Option(
        None,
        "--benchmark/--no-benchmark",
        help="hidden provenance: no method sees the task's own solution (default on)",
    ),
    resume: bool = typer.Option(
        False, "--resume", help="continue the bench in --out with the plan saved in its bench.json"
    ),
    verbose: bool = typer.Option(False, "--verbose", help="show each run's progress"),
    workers: int = typer.Option(
        1,
        "--workers",
        help="runs at once, each in its own process: on CUDA one per GPU (at most the GPUs "
        "this machine shows), whole tasks each",
    ),
    executor: str = typer.Option(
        None, "--executor", help="one executor shared by every run: " + EXECUTOR.help
    ),
    ray_address: str = typer.Option(None, "--ray-address", help=RAY_ADDRESS.help),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="print the plan, each cell's outcome and the per-method summary as one JSON "
        "object on stdout (the progress lines go to stderr)",
    ),
    quiet: bool = typer.Option(
        False, "--quiet", help="no progress lines on stderr as each run starts"
    ),
) -> None:
    """Run every method on every task (and seed) as agent runs; one result row per attempt.

    Re-running the same command continues a bench that was stopped. Exits 0 when every run
    finished (whatever its kernels' verdicts), 1 when a run stopped on an error, 2 on a usage
    error or when another process owns the bench folder or one of its runs, 130 on Ctrl-C."""
    from agents.api_tools import bench_methods
    from agents.bench import BenchError, skipped_methods
    from agents.core.settings import SettingsError

    try:
        settings = parse_set(set_)
    except SettingsError as exc:
        _die(str(exc))
    say = err_console if as_json else console  # --json keeps stdout for the JSON document
    plan: BenchPlan | None = None
    total = 0
    started: list[Cell] = []

    def planned(made: BenchPlan) -> None:  # the plan's lines, before any run starts
        nonlocal plan, total
        plan = made
        what = f"suite {made.suite}" if made.suite else ", ".join(made.tasks[:3])
        what += f" ({len(made.tasks)} tasks)" if made.suite or len(made.tasks) > 3 else ""
        limits = ", ".join(f"{k.removeprefix('budget.')}={v}" for k, v in made.budget.items())
        say.print(
            f"[bold]kernforge bench[/]: {escape(what)} x {', '.join(made.methods)} x "
            f"{len(made.seeds)} seed(s); model {escape(made.llm)}; budget per run "
            f"{limits or 'the defaults'}; results in {escape(str(made.out))}"
        )
        skipped = skipped_methods(made)
        for reason in skipped.values():
            say.print(f"[yellow]skipped[/] {escape(reason)}")
        for what, why in made.excluded.items():
            say.print(f"[yellow]not benched[/] {escape(what)}: {escape(why)}")
        total = sum(c.method not in skipped for c in made.cells())

    def starting(cell: Cell) -> None:  # one line as its run starts
        started.append(cell)
        step(
            f"bench: start {len(started)}/{total}: {cell.task} · {cell.method} · seed {cell.seed}",
            quiet,
        )

    def show(number: int, total: int, outcome: CellOutcome) -> None:
        cell = outcome.cell
        style = STATUS_STYLE.get(outcome.status, "default")
        verdict = (
            "correct"
            if outcome.correct
            else ("no correct kernel" if outcome.status != "stopped" else "")
        )
        say.print(
            f"{escape(f'[{number}/{total}]')} {cell.task} · {cell.method} · seed {cell.seed}: "
            f"[{style}]{outcome.status}[/] {outcome.attempts} attempt(s) {verdict} "
            f"({outcome.seconds:.0f} s) [dim]{escape(outcome.message[:120])}[/]"
        )

    try:
        result = bench_methods(
            suite=suite,
            tasks=tasks,
            methods=methods,
            llm=llm,
            seeds=seeds,
            budget=budget,
            settings=settings,
            device=device,
            out=out,
            benchmark=benchmark,
            resume=resume,
            workers=workers,
            executor=executor,
            ray_address=ray_address,
            console=say,
            verbose=verbose,
            on_cell=show,
            on_plan=planned,
            on_start=starting,
        )
    except BenchError as exc:
        _die(str(exc))
    except KeyboardInterrupt:
        if plan is None:  # nothing planned, so nothing ran
            raise
        say.print(
            f"[yellow]interrupted[/]: finished runs and their rows are kept; continue with "
            f"`kernforge bench --resume --out {escape(str(plan.out))}` (or the same command)"
        )
        raise typer.Exit(130) from None
    for warning in result.warnings:
        say.print(f"[yellow]warning[/] {escape(warning)}")
    if as_json:
        print_json(_result_record(result))
    else:
        _print_summary(result, console)
    for outcome in result.busy:
        err_console.print(f"[bold red]busy:[/] {escape(outcome.message)}", soft_wrap=True)
    if result.busy:
        _die(
            f"{len(result.busy)} run(s) owned by another process were not run (named above); "
            f"when it has ended, run `kernforge bench --resume --out {result.plan.out}`"
        )
    if result.stopped:
        say.print(
            f"[bold red]{len(result.stopped)} run(s) stopped on an error[/]; fix the cause and run "
            "the same command again to continue them"
        )
        raise typer.Exit(1)


def _result_record(result: BenchResult) -> dict[str, Any]:
    """What `bench --json` prints: the plan, one entry per cell of this call, the summary."""
    cells = [
        {"task": o.cell.task, "method": o.cell.method, "seed": o.cell.seed, "run_id": o.cell.run_id}
        | {k: v for k, v in asdict(o).items() if k != "cell"}
        for o in result.outcomes
    ]
    return {
        "plan": result.plan.to_json(),
        "cells": cells,
        "summary": [asdict(m) for m in result.summary],
        "skipped_methods": result.skipped_methods,
        "warnings": result.warnings,
        "results": str(result.plan.out / "results.jsonl"),
    }


def _print_summary(result: BenchResult, console: Console) -> None:
    if not result.summary:
        console.print("no result rows for this plan")
        return
    stages = [t for t in STAGE_COLUMNS if t in result.summary[0].pass_rates]
    timed = any(
        isinstance(v, float) for m in result.summary for v in (m.geomean_eager, m.geomean_compile)
    )
    table = Table(
        title="per method: tasks and runs with a correct kernel; stage pass rates over runs",
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("method", no_wrap=True)
    for col in ("tasks", "runs", *(STAGE_COLUMNS[t] for t in stages)):
        table.add_column(col, justify="right", min_width=len(col))
    if timed:  # geomean speedups over the correct runs; a method without any shows "-"
        table.add_column("x eager", justify="right")
        table.add_column("x compile", justify="right")
    reasons: dict[str, set[str]] = {}
    for m in result.summary:
        for value in (m.geomean_eager, m.geomean_compile):
            if isinstance(value, str):
                reasons.setdefault(value, set()).add(m.label)
        speeds = [_speed(m.geomean_eager), _speed(m.geomean_compile)] if timed else []
        table.add_row(
            escape(m.label),
            f"{m.tasks_correct}/{m.tasks}",
            f"{m.runs_correct}/{m.runs}",
            *(f"{m.pass_rates[t]:.0%}" for t in stages),
            *speeds,
        )
    console.print(table)
    for reason, methods in sorted(reasons.items()):
        console.print(f"[dim]speed {escape(reason)}: {escape(', '.join(sorted(methods)))}[/]")
    if any(m.label.endswith("[scripted]") for m in result.summary):
        console.print(
            "[magenta]methods marked \\[scripted] ran on the replay provider: scripted replies, "
            "not a model[/]"
        )
    console.print(
        f"rows: {escape(str(result.plan.out / 'results.jsonl'))}, "
        f"{escape(str(result.plan.out / 'results.parquet'))}; report: "
        f"kernforge report {escape(str(result.plan.out))}"
    )
