"""`kernforge import`: judge kernels produced elsewhere (a folder, GEAK JSONL, KernelAgent sessions).

Mount with `app.command("import")(import_cmd)`.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from agents.cli.console import console, err_console, print_json, step
from benchmarks import JudgeConfig


def import_cmd(
    source: Path = typer.Argument(
        ...,
        help="a folder of <task_id>.py files, GEAK .jsonl/.json output (file or folder), "
        "or a folder of KernelAgent sessions",
    ),
    out: Path = typer.Option(
        ..., "--out", help="results folder: results.jsonl + results.parquet (resumable)"
    ),
    fmt: str = typer.Option("auto", "--format", help="folder | geak | kernelagent | auto"),
    method: str = typer.Option(
        None, "--method", help="method name on the rows (default: external, geak or kernelagent)"
    ),
    model: str = typer.Option(
        "", "--model", help="the model that wrote the kernels (provenance only)"
    ),
    dtype: str = typer.Option(
        None, "--dtype", help="for kernels named by task name: softmax + fp16 -> softmax_fp16"
    ),
    task: str = typer.Option(
        None, "--task", help="kernelagent: the task id of a single session folder"
    ),
    device: str = typer.Option("auto", "--device", help="cuda, cpu (Triton interpreter) or auto"),
    trials: int = typer.Option(
        JudgeConfig.trials, "--trials", help="correctness trials per input mode"
    ),
    seed: int = typer.Option(0, "--seed", help="the judge's base seed for inputs"),
    timeout: float = typer.Option(
        JudgeConfig.timeout_s,
        "--timeout",
        help="seconds a candidate process may run (from its start) before it is killed",
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="print what was judged, skipped and why as one JSON object on stdout (the lines "
        "per kernel go to stderr)",
    ),
) -> None:
    """Judge kernels made by another system and store one result row per kernel.

    Each kernel is judged on the problem its source published beside it (a GEAK record's label and
    test code, a KernelAgent session's problem.txt), written under <out>/tasks/, else on the
    kernforge task its name gives. Unknown task names, unusable lines and kernels that cannot be
    judged here are reported with their file and line and why. Exits 0 when something was judged
    (whatever the verdicts), 1 when nothing could be, 2 on a usage error."""
    from benchmarks import ResultStore, import_kernels, read_source, resolve_device

    try:
        resolve_device(device)
        plan = read_source(source, fmt, task)
    except (ValueError, FileNotFoundError, RuntimeError) as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from None
    store = ResultStore(out)
    say = err_console if as_json else console  # --json keeps stdout for the JSON document
    say.print(
        f"[bold]kernforge import[/] {escape(str(source))} ({plan.format}): {len(plan.kernels)} kernel(s) found; "
        f"results in {escape(str(out))}"
    )

    def show(row) -> None:  # noqa: ANN001 - benchmarks.results.rows.ResultRow
        status = "[green]PASS[/]" if row.passed else f"[red]FAIL[/] ({row.error_class})"
        say.print(
            f"  {row.task_id} seed {row.seed} attempt {row.attempt}: {status}  {escape(row.origin)}"
        )

    def judging(task_id: str, origin: str) -> None:
        step(f"import: judging {task_id} from {origin}")

    config = JudgeConfig(device=device, trials=trials, seed=seed, timeout_s=timeout)
    try:
        report = import_kernels(
            plan,
            store,
            method=method,
            model=model,
            dtype=dtype,
            judge_config=config,
            on_row=show,
            on_judging=judging,
        )
    except KeyboardInterrupt:
        say.print(
            "[yellow]interrupted[/]: rows judged so far are stored; run the same command again to continue"
        )
        raise typer.Exit(130) from None
    if as_json:
        print_json(
            {
                "format": plan.format,
                "found": len(plan.kernels),
                "judged": [
                    {
                        "task_id": r.task_id,
                        "seed": r.seed,
                        "attempt": r.attempt,
                        "passed": r.passed,
                        "error_class": r.error_class,
                        "origin": r.origin,
                    }
                    for r in report.added
                ],
                "correct": report.passed,
                "already_stored": len(report.already),
                "unknown": [str(x) for x in report.unknown],
                "skipped": [str(x) for x in report.skipped],
                "not_judged": [str(x) for x in report.not_judged],
                "tasks": dict(report.tasks),
                "warnings": list(store.warnings),
                "rows": str(store.jsonl),
            }
        )
        raise typer.Exit(1 if report.judged_nothing else 0)
    for warning in store.warnings:
        console.print(f"[yellow]warning[/] {escape(warning)}")
    for item in report.unknown:
        console.print(f"[yellow]unknown task[/] {escape(str(item))}")
    for item in report.skipped:
        console.print(f"[yellow]skipped[/] {escape(str(item))}")
    for item in report.not_judged:
        console.print(f"[yellow]not judged[/] {escape(str(item))}")
    for task_id, path in report.tasks.items():
        console.print(f"task {escape(task_id)}: {escape(path)}")
    speed = (
        "speed not measured (no GPU)"
        if not any(r.perf_measured for r in report.added)
        else "speed measured"
    )
    console.print(
        f"\n{len(report.added)} judged ({report.passed} correct; {speed}), {len(report.already)} already stored, "
        f"{len(report.unknown)} unknown task name(s), {len(report.skipped)} unusable item(s), "
        f"{len(report.not_judged)} not judged here. "
        f"Rows: {escape(str(store.jsonl))}"
        + (f", {escape(str(store.parquet))}" if store.parquet.is_file() else "")
    )
    if report.judged_nothing:
        err_console.print("[bold red]error:[/] nothing could be judged; the reasons are above")
        raise typer.Exit(1)
