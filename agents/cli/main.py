"""The `kernforge` command line. Each command is a thin layer over a public Python API.

`main` is the entry point (the `kernforge` console script, `python -m agents.cli`): no traceback
reaches the user from it. Typer's usage errors stay as they are (exit 2); an error that already
says what is wrong (a damaged file, a folder owned by another process, a bad setting) is one line,
exit 2; a stopped or crashed run is its message with the resume command, exit 1; anything else
is a bug: one line, exit 1, and its full trace appended to `<runs_dir>/error.log`.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import typer
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from agents.cli.console import console, err_console, print_json, step
from agents.cli.options import parse_set
from agents.core.settings import SETTINGS, Setting
from benchmarks import JudgeConfig

DEFAULT_DEMO_TASK = "softmax_fp32"


class KernforgeGroup(TyperGroup):
    """The root command. Where stderr is not a terminal (a log, a pipe, a test), usage errors
    and help are click's plain text: no boxes drawn at 80 columns around a long message."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        if not sys.stderr.isatty():
            _plain(self)
        return super().main(*args, **kwargs)


def _plain(command: click.Command) -> None:
    """Switch `command` and every sub-command to plain (non-rich) help and errors."""
    if hasattr(command, "rich_markup_mode"):
        command.rich_markup_mode = None  # type: ignore[attr-defined]
    for sub in getattr(command, "commands", {}).values():
        _plain(sub)


def package_version() -> str:
    """kernforge's version: the installed package's, else pyproject.toml's (a plain checkout)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kernforge")
    except PackageNotFoundError:
        import tomllib

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        return str(tomllib.loads(pyproject.read_text())["project"]["version"])


def _print_version(value: bool) -> None:
    if value:
        print(f"kernforge {package_version()}")
        raise typer.Exit()


app = typer.Typer(
    cls=KernforgeGroup,
    add_completion=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
tasks_app = typer.Typer(no_args_is_help=True, help="List, show and self-check benchmark tasks.")
app.add_typer(tasks_app, name="tasks")


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="print kernforge's version and exit",
    ),
) -> None:
    """kernforge: agentic Triton kernel optimizer and honest benchmark.

    Every command takes -h / --help; listings take --json (one JSON document on stdout)."""


def _die(message: str, code: int = 2) -> None:
    err_console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(code)


def _load_task(ref: str):  # noqa: ANN202 - returns benchmarks.task.Task
    from benchmarks import TaskError, get_task

    try:
        return get_task(ref)
    except TaskError as exc:
        _die(str(exc))
    except KeyError as exc:
        _die(str(exc.args[0]))


@tasks_app.command("list")
def tasks_list(
    category: str = typer.Option(None, help="only this category"),
    suite: str = typer.Option(
        None,
        help="full, lite, quant, serving, or a folder of task files (KernelBench / TritonBench / native)",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="print the tasks (and files not loaded) as one JSON object"
    ),
) -> None:
    """One line per task: id, category, shapes, and what the judge says about it up front; for a
    folder, also each file that did not load and why."""
    from agents import api_tools
    from benchmarks import TaskError

    try:
        listed = api_tools.tasks(suite, category=category)
    except (TaskError, api_tools.InputError) as exc:
        _die(str(exc))
    tasks, not_loaded = listed.tasks, listed.not_loaded
    rows = [
        {
            "id": task.id,
            "category": task.category,
            "dtype": task.dtype,
            "gpu_shapes": len(task.shapes),
            "cpu_shapes": len(task.cpu_shapes),
            "flagged": _flags(task),
            "path": str(task.path),
        }
        for task in tasks
    ]
    if as_json:
        print_json(
            {
                "tasks": rows,
                "not_loaded": [{"path": str(n.path), "reason": n.reason} for n in not_loaded],
            }
        )
    else:
        _print_task_rows(rows, not_loaded)
    if not_loaded and not tasks:
        raise typer.Exit(2)


def _flags(task: Any) -> list[str]:
    """What the judge says about a task up front: no kernel can pass it, or GPU only."""
    why = [f"cannot pass: {w}" for w in task.cannot_pass()]
    if task.refusal("cpu"):
        why.append("GPU only: too large for the CPU interpreter")
    return why


def _print_task_rows(rows: list[dict[str, Any]], not_loaded: list[Any]) -> None:
    table = Table(show_header=True, header_style="bold")
    # an id is never cut: its column is as wide as the longest id, even on a narrow terminal
    table.add_column("id", no_wrap=True, min_width=max((len(r["id"]) for r in rows), default=2))
    for col in ("category", "dtype", "GPU shapes", "CPU shapes", "flagged"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            escape(r["id"]),
            r["category"],
            r["dtype"],
            str(r["gpu_shapes"]),
            str(r["cpu_shapes"]),
            escape("; ".join(r["flagged"])) or "—",
        )
    console.print(table)
    flagged = sum(bool(r["flagged"]) for r in rows)
    console.print(
        f"{len(rows)} tasks"
        + (f" ({flagged} flagged)" if flagged else "")
        + (f", {len(not_loaded)} file(s) not loaded" if not_loaded else "")
    )
    for item in not_loaded:
        console.print(f"[yellow]not loaded[/] {escape(str(item))}")


@tasks_app.command("show")
def tasks_show(
    task_id: str,
    as_json: bool = typer.Option(False, "--json", help="print the task as one JSON object"),
) -> None:
    """Everything a task declares."""
    task = _load_task(task_id)
    if as_json:
        print_json(_task_record(task))
        return
    console.print(
        f"[bold]{escape(task.id)}[/]  ({task.category}, {task.dtype})  {escape(str(task.path))}"
    )
    console.print(escape(task.description))
    params = ", ".join(task.signature().parameters)
    console.print(f"\nentry point: [bold]{escape(f'{task.entry_point}({params})')}[/]")
    tol = task.tolerance
    if tol.is_quant:
        console.print(
            f"tolerance: cosine ≥ {tol.cosine}, relative L1 ≤ {tol.rel_l1}, RMSE ≤ {tol.rmse}  ({escape(tol.why)})"
        )
    else:
        console.print(f"tolerance: atol {tol.atol}, rtol {tol.rtol}")
    console.print(f"modes: {', '.join(task.modes)}")
    console.print(
        f"forbidden (besides the global list): {escape(', '.join(task.forbidden)) or '—'}"
    )
    for why in task.cannot_pass():
        console.print(f"[yellow]flagged[/]: no kernel can pass this task: {escape(why)}")
    if task.refusal("cpu"):
        console.print(f"[yellow]GPU only[/]: {escape(task.refusal('cpu') or '')}")
    for note in task.notes_for("cpu"):
        console.print(f"note: {escape(note)}")
    table = Table(show_header=True, header_style="bold")
    for col in ("shape", "dims", "phase", "weight", "GFLOP", "MB moved", "source"):
        table.add_column(col)
    for s in _shape_rows(task):
        table.add_row(
            escape(s["name"]),
            escape(str(s["dims"])),
            s["phase"],
            "—" if s["weight"] is None else f"{s['weight']:g}",
            f"{s['gflop']:.3g}",
            f"{s['mb_moved']:.3g}",
            escape(s["source"]),
        )
    console.print(table)


def _shape_rows(task: Any) -> list[dict[str, Any]]:
    """A task's GPU shapes, then its CPU interpreter shapes (phase "cpu", no weight)."""
    rows = [
        {"name": s.name, "dims": s.dims, "phase": s.phase, "weight": s.weight, "source": s.source}
        for s in task.shapes
    ]
    rows += [
        {
            "name": s.name,
            "dims": s.dims,
            "phase": "cpu",
            "weight": None,
            "source": "CPU interpreter shape",
        }
        for s in task.cpu_shapes
    ]
    for row in rows:
        row["gflop"] = task.flops(row["dims"]) / 1e9
        row["mb_moved"] = task.min_bytes(row["dims"]) / 1e6
    return rows


def _task_record(task: Any) -> dict[str, Any]:
    """What `tasks show --json` prints: the task's declarations as plain data."""
    tol = task.tolerance
    tolerance = (
        {"cosine": tol.cosine, "rel_l1": tol.rel_l1, "rmse": tol.rmse, "why": tol.why}
        if tol.is_quant
        else {"atol": tol.atol, "rtol": tol.rtol}
    )
    return {
        "id": task.id,
        "name": task.name,
        "category": task.category,
        "dtype": task.dtype,
        "path": str(task.path),
        "description": task.description,
        "entry_point": task.entry_point,
        "parameters": list(task.signature().parameters),
        "tolerance": tolerance,
        "modes": list(task.modes),
        "forbidden": list(task.forbidden),
        "flagged": _flags(task),
        "cpu_refusal": task.refusal("cpu"),
        "notes": list(task.notes_for("cpu")),
        "shapes": _shape_rows(task),
    }


@tasks_app.command("check")
def tasks_check(
    suite: str = typer.Option(None, help="full, lite, quant, serving, or a folder of task files"),
    device: str = typer.Option("cpu", help="cpu (interpreter, CPU shapes) or cuda (GPU shapes)"),
    tasks: str = typer.Option("", help="comma-separated task ids"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Self-check tasks: the reference runs, inputs are seeded, formulas are sane, outlier mode
    changes inputs, the reference solution passes and a perturbed copy fails."""
    import subprocess

    from benchmarks import is_folder_suite, suite_tasks
    from knowledge_base import KERNELS_DIR

    if suite and not is_folder_suite(suite):
        try:
            suite_tasks(suite)
        except KeyError as exc:
            _die(str(exc.args[0]))
    for task_id in filter(None, (t.strip() for t in tasks.split(","))):
        _load_task(task_id)

    args = [sys.executable, "-m", "benchmarks.selfcheck", "--device", device]
    args += ["--solutions", str(KERNELS_DIR)]  # the knowledge base owns the reference solutions
    if suite:
        args += ["--suite", suite]
    if tasks:
        args += ["--tasks", tasks]
    if as_json:
        args.append("--json")
    env = dict(os.environ)
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"  # must be set before triton is imported
    raise typer.Exit(subprocess.call(args, env=env))


@app.command("eval")
def eval_cmd(
    task: str = typer.Option(
        ...,
        "--task",
        help="task id (see `kernforge tasks list`) or a task file: native, KernelBench or TritonBench (docs/formats.md)",
    ),
    candidate: Path = typer.Option(
        ...,
        "--candidate",
        help="Python file defining the entry point (ModelNew for KernelBench) with Triton kernels",
    ),
    device: str = typer.Option("auto", help="cuda, cpu (Triton interpreter) or auto"),
    trials: int = typer.Option(JudgeConfig.trials, help="correctness trials per input mode"),
    seed: int = typer.Option(
        None,
        help="inputs' base seed; every trial derives its own (default: fresh; a verdict says its)",
    ),
    shape_seed: int = typer.Option(
        None,
        "--shape-seed",
        help="seed of the drawn CPU shapes (default: fresh; a verdict says its)",
    ),
    timeout: float = typer.Option(
        JudgeConfig.timeout_s,
        help="seconds the candidate process may run (from its start) before it is killed",
    ),
    no_perf: bool = typer.Option(False, "--no-perf", help="skip timing"),
    as_json: bool = typer.Option(False, "--json", help="print the full verdict record as JSON"),
    unsafe_no_isolation: bool = typer.Option(
        False,
        "--unsafe-no-isolation",
        help="UNSAFE: where no OS isolation (bubblewrap) is available, run the candidate anyway, as you",
    ),
) -> None:
    """Judge one candidate kernel. Exits 1 when it fails."""
    from benchmarks import evaluate

    t = _load_task(task)
    if not candidate.is_file():
        _die(f"candidate file {candidate} does not exist")
    step(f"judge: {candidate} on task {t.id} (device {device}, {trials} trial(s) per input mode)")
    try:
        verdict = evaluate(
            t,
            candidate,
            JudgeConfig(
                device=device,
                trials=trials,
                seed=seed,
                shape_seed=shape_seed,
                timeout_s=timeout,
                perf=not no_perf,
                allow_unisolated=unsafe_no_isolation,
            ),
        )
    except (RuntimeError, ValueError) as exc:
        _die(str(exc))
    if as_json:
        print(verdict.model_dump_json(indent=2))
    else:
        from agents.cli.verdict_view import print_verdict

        print_verdict(verdict, console)
    raise typer.Exit(0 if verdict.passed else 1)


@app.command("doctor")
def doctor(as_json: bool = typer.Option(False, "--json")) -> None:
    """What this machine has: GPU and driver, torch/triton versions, ncu, sandbox, API keys."""
    from agents.cli.doctor import collect

    info = collect()
    if as_json:
        print(json.dumps(info, indent=2, default=str))
        return
    table = Table(show_header=False)
    table.add_column("item", style="bold")
    table.add_column("value")
    for key, value in info.items():
        table.add_row(key, str(value))
    console.print(table)


def _setting_param(setting: Setting) -> str:
    """The Python name under which `run_cmd` receives a setting's option."""
    return "setting_" + setting.key.replace(".", "_")


def _with_setting_options(command: Callable[..., None]) -> Callable[..., None]:
    """Give `command` one option per setting that declares a `flag` in SETTINGS (a bool as
    --x/--no-x), so adding a row to the table adds its flag. The values reach the command in
    its **kwargs under `_setting_param` names; None means the flag was not given."""
    signature = inspect.signature(command)
    fixed = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    options = [
        inspect.Parameter(
            _setting_param(s),
            inspect.Parameter.KEYWORD_ONLY,
            default=typer.Option(
                None,
                f"{s.flag}/--no-{s.flag.removeprefix('--')}" if s.type is bool else s.flag,
                help=f"{s.help} (setting {s.key})",
            ),
            annotation=s.type,
        )
        for s in SETTINGS
        if s.flag
    ]
    command.__signature__ = signature.replace(parameters=[*fixed, *options])  # type: ignore[attr-defined]
    return command


@app.command("run")
@_with_setting_options
def run_cmd(
    task: str = typer.Option(
        None, "--task", help="task id (see `kernforge tasks list`) or a task file"
    ),
    resume: str = typer.Option(
        None,
        "--resume",
        help="continue the run with this id (or directory) from its checkpoint; budget flags "
        "and --runs-dir may be given with it, other settings are refused",
    ),
    budget: str = typer.Option(
        None, "--budget", help="iterations=N,tokens=N,cost=USD,wall=S,gpu=S"
    ),
    run_id: str = typer.Option(
        None, "--run-id", help="name the run directory (default: time-task-random)"
    ),
    set_: list[str] = typer.Option(
        None, "--set", help="KEY=VALUE for any setting, e.g. --set dropout.after=2 (repeatable)"
    ),
    show_config: bool = typer.Option(
        False,
        "--show-config",
        help="print the merged settings and where each comes from, then exit",
    ),
    quiet: bool = typer.Option(
        False, "--quiet", help="no progress output (events.jsonl is still written)"
    ),
    **setting_flags: Any,
) -> None:
    """Run the agent on a task: write, judge, repair and optimise Triton kernels.

    Exits 0 when a correct kernel was found, 1 when none was, 2 on a usage error, 130 on Ctrl-C."""
    from agents.core.settings import SettingsError, parse_budget, resolve, resume_change

    flags: dict[str, Any] = {}
    given_as: dict[str, str] = {}  # dotted key -> the flag it was given with, for messages
    for s in SETTINGS:
        value = setting_flags.get(_setting_param(s))
        if value is not None:
            flags[s.key], given_as[s.key] = value, s.flag
    try:
        if budget:
            for key, value in parse_budget(budget).items():
                if key not in flags:
                    flags[key], given_as[key] = value, "--budget"
        for key, value in parse_set(set_).items():
            flags[key], given_as[key] = value, f"--set {key}"
        merged = resolve(flags)
        changes = (
            {key: resume_change(key, value, given_as[key]) for key, value in flags.items()}
            if resume
            else {}
        )
    except SettingsError as exc:
        _die(str(exc))
    if show_config:
        _print_settings(merged)
        return
    if resume:
        for name, value in (("--task", task), ("--run-id", run_id)):
            if value is not None:
                _die(
                    f"{name} cannot be given with --resume: the run keeps the {name[2:]} it started with"
                )
    elif not task:
        _die("give --task <id | task file>, or --resume <run-id> (see `kernforge tasks list`)")
    else:
        _load_task(task)
    from agents import api  # the agent's heavy imports: only once the input is known good
    from agents.core.config import AgentConfig
    from agents.core.llm.base import LLMError

    try:
        if resume:
            result = api.resume(
                resume, runs_dir=merged["runs_dir"], console=console, quiet=quiet, changes=changes
            )
        else:
            config = AgentConfig.from_settings(task, merged, run_id=run_id)
            result = api.start(config, merged, console=console, quiet=quiet)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except api.RunError as exc:
        _die(str(exc), code=1)
    except (LLMError, ValueError, FileNotFoundError, FileExistsError, RuntimeError) as exc:
        _die(str(exc))
    raise typer.Exit(0 if result.best_kernel is not None else 1)


def _print_settings(merged) -> None:  # noqa: ANN001 - agents.core.settings.Settings
    from agents.core.settings import project_config_path, user_config_path

    table = Table(
        show_header=True,
        header_style="bold",
        title="kernforge settings (lowest to highest: default, preset, user file, project file, environment, flag)",
    )
    for col in ("key", "value", "source"):
        table.add_column(col)
    for key, value, source in merged.rows():
        table.add_row(key, value, source)
    console.print(table)
    for label, path in (("user file", user_config_path()), ("project file", project_config_path())):
        console.print(f"{label}: {path} ({'found' if path.is_file() else 'absent'})")


@app.command("demo")
def demo(task: str = typer.Option(DEFAULT_DEMO_TASK, help="task to run the demo on")) -> None:
    """The main job on its default: the agent with the offline policy on a task, device auto,
    with hidden provenance (benchmark mode), so the kernel is the agent's, not the task's own.

    Set-up first: the knowledge base is built once (embedding takes a while the first time) and
    reused after (none with kb = off). Then the run: without a GPU it checks correctness through
    the Triton CPU interpreter and stops at the first correct kernel (speed cannot be measured
    there); with one it also searches the kernel's tunables."""
    import time

    from agents import api
    from agents.core.settings import resolve

    _load_task(task)
    started = time.monotonic()
    if resolve({}).values["kb"] == "off":
        console.print("[bold]kernforge demo[/], set-up: none (the knowledge base is off: kb = off)")
    else:
        console.print(
            "[bold]kernforge demo[/], set-up: the knowledge base (built on first use, then reused)"
        )
        try:
            from knowledge_base import default_kb

            kb = default_kb()
            kb.on_progress = step  # the first build takes minutes: say what it is doing
            try:
                kb.ensure_built()
            finally:
                kb.on_progress = None
            console.print(f"knowledge base ready ({time.monotonic() - started:.0f} s)")
        except Exception as exc:  # noqa: BLE001 - chromadb/embedding failures vary; the run copes without it
            console.print(
                f"[yellow]knowledge base unavailable ({type(exc).__name__}: {exc}); the run goes on without it[/]"
            )
    console.print(
        f"[bold]kernforge demo[/], the run: `kernforge run --task {task} --llm offline --method offline "
        "--device auto --benchmark` (hidden provenance: the agent never sees the task's own solution)"
    )
    run_started = time.monotonic()
    try:
        result = api.run(
            task,
            llm="offline",
            method="offline",
            device="auto",
            settings={"benchmark": True},
            console=console,
        )
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except api.RunError as exc:
        _die(str(exc), code=1)
    except (ValueError, RuntimeError) as exc:
        _die(str(exc))
    console.print(
        f"\nthe run took {time.monotonic() - run_started:.0f} s (set-up {run_started - started:.0f} s)"
    )
    if result.best_kernel is not None:
        console.print(f"[bold]The best kernel is at[/] {result.best_kernel}")
    raise typer.Exit(0 if result.best_kernel is not None else 1)


def _mount_results_commands() -> None:
    """bench / import / report / pairs / kb: thin command modules whose heavy imports happen
    when they run."""
    from agents.cli.bench import bench
    from agents.cli.import_cmd import import_cmd
    from agents.cli.kb import kb_app
    from agents.cli.pairs import pairs_app
    from agents.cli.report import report_cmd

    app.command("bench")(bench)
    app.command("import")(import_cmd)
    app.command("report")(report_cmd)
    app.add_typer(pairs_app, name="pairs")
    app.add_typer(kb_app, name="kb")


_mount_results_commands()


def _bad_input() -> tuple[type[BaseException], ...]:
    """Errors that say what was wrong and where in their message: shown as they are, exit 2."""
    from agents.bench import BenchError
    from agents.core.lock import FolderLocked
    from agents.core.settings import SettingsError
    from benchmarks import RunFileError, TaskError

    return (RunFileError, FolderLocked, SettingsError, BenchError, TaskError)


def _error_log() -> Path:
    """Where the top-level handler keeps a trace no run owns: `<runs_dir>/error.log`."""
    from agents.core.crashlog import ERROR_LOG
    from agents.core.settings import BY_KEY

    setting = BY_KEY["runs_dir"]
    return Path(os.environ.get(setting.env) or str(setting.default)) / ERROR_LOG


def handle_unexpected(exc: Exception) -> int:
    """One message for an exception no command handled; returns the exit code. The full trace
    of an internal error is appended to `<runs_dir>/error.log` (else a file in the temp folder)."""
    import tempfile

    from agents import api
    from agents.core.crashlog import append_trace, one_line

    if isinstance(exc, api.RunError):  # a run that stopped or crashed: it says how to resume
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        return 1
    if isinstance(exc, _bad_input()):
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        return 2
    context = "kernforge " + " ".join(sys.argv[1:])
    try:
        log = append_trace(_error_log(), exc, context)
    except OSError:
        log = append_trace(Path(tempfile.gettempdir()) / "kernforge-error.log", exc, context)
    err_console.print(
        f"[bold red]error:[/] internal error: {escape(one_line(exc))} (the full trace is in "
        f"{escape(str(log))}; please report it)",
        soft_wrap=True,
    )
    return 1


def main() -> None:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    try:
        app()
    except Exception as exc:  # noqa: BLE001 - the last handler: one line and a log, never a traceback
        sys.exit(handle_unexpected(exc))


if __name__ == "__main__":
    main()
