"""The Python API, mirroring the CLI, for notebooks and scripts.

    from agents import api
    verdict = api.evaluate("softmax_fp32", "my_kernel.py", device="cpu")
    result = api.run("softmax_fp32", llm="offline", device="cpu", budget="iterations=4")
    result = api.resume(result.run_id)
    print(result.best_kernel, result.summary["speed"])

`run` merges settings exactly as `kernforge run` does (kernforge.toml < environment < the
arguments given here); `settings={"dropout.after": 2}` sets any key of agents/core/settings.py.
`result.summary["came_from"]` says where the best kernel came from (`summary["provenance"]`).

The other commands (tasks, kb, bench, import, report, pairs) are in agents/api_tools.py; the
package's front door (`import agents`) has the names of both modules.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from agents.core.config import AgentConfig
from agents.core.context import RunContext
from agents.core.crashlog import one_line
from agents.core.llm.base import LLMError, Provider
from agents.core.llm.budget import BudgetTracker
from agents.core.llm.concurrency import shared_limiter
from agents.core.llm.retry import RetryPolicy
from agents.core.lock import FolderLocked, hold
from agents.core.progress import Progress
from agents.core.rundir import BUDGET, MANIFEST, RunDir, new_run_id
from agents.core.seams import Seams
from agents.core.settings import BY_KEY, Settings, SettingsError, parse_budget, resolve
from benchmarks import JudgeConfig, RunFileError, TaskError, read_json

REPO_ROOT = Path(__file__).resolve().parents[1]


class RunError(RuntimeError):
    """A run stopped before finishing (model unreachable, bad key, ...); it can be resumed."""

    def __init__(self, run_id: str, message: str, run_dir: Path | None = None) -> None:
        super().__init__(
            f"{message}\nThe run is kept; fix the cause and continue with: "
            f"kernforge run --resume {run_dir or run_id}"
        )
        self.run_id = run_id
        self.run_dir = run_dir


class RunCrashed(RunError):
    """An unexpected error inside a run (a bug): its full trace is in the run's error.log. The
    message is one line: what broke, where the trace is, and the resume command."""

    def __init__(self, run_id: str, message: str, run_dir: Path) -> None:
        RuntimeError.__init__(
            self, f"{message}; the run is kept: continue with kernforge run --resume {run_dir}"
        )
        self.run_id = run_id
        self.run_dir = run_dir


# errors that already say what was wrong and where, in one message: they leave a run as they are
_SAYS_WHAT = (RunError, FolderLocked, RunFileError, SettingsError, LLMError)


@contextmanager
def _owned(run: RunDir) -> Iterator[None]:
    """`run` owned by this process for the block (`FolderLocked`, naming the owner, when
    another process has it), its open files closed at the end. An unexpected error inside is
    written whole into the run's error.log, logged as a "crashed" event, and raised as
    `RunCrashed` with the resume command."""
    with hold(run.path, "run", again=f"`kernforge run --resume {run.path}`"):
        try:
            yield
        except _SAYS_WHAT:
            raise
        except Exception as exc:
            log = run.log_error(exc)
            error = one_line(exc)
            run.event("crashed", error=error, log=run.rel(log))
            raise RunCrashed(
                run.run_id,
                f"internal error in run {run.run_id}: {error} (the full trace is in {log})",
                run.path,
            ) from exc
        finally:
            run.close()


def _checkpoint_damaged(run: RunDir, exc: Exception) -> RunFileError:
    """The one line for a checkpoint that sqlite or the state's decoder cannot read."""
    why = f"sqlite: {exc}" if isinstance(exc, sqlite3.DatabaseError) else one_line(exc)
    return RunFileError(
        run.checkpoint,
        f"damaged checkpoint ({why}): the run cannot be resumed from it; its attempts on "
        f"disk are kept (move the file aside to start this run over, or start a new run)",
    )


@dataclass
class RunResult:
    run_id: str
    run_dir: Path
    finished: bool
    reason: str
    best_attempt: int | None
    best_kernel: Path | None
    summary: dict[str, Any] = field(default_factory=dict)


def evaluate(
    task: Any,
    candidate: str | Path,
    *,
    device: str = "auto",
    trials: int = JudgeConfig.trials,
    seed: int | None = None,
    timeout_s: float = JudgeConfig.timeout_s,
    perf: bool = True,
    source: str | None = None,
) -> Any:
    """Judge one candidate file (or `source` text) on a task (an id, a task file, or a Task).
    `seed` fixes the inputs (default: fresh per evaluation; the verdict records its)."""
    from benchmarks import evaluate as judge

    return judge(
        _task(task),
        candidate,
        JudgeConfig(device=device, trials=trials, seed=seed, timeout_s=timeout_s, perf=perf),
        source=source,
    )


def run(
    task: str,
    *,
    llm: str | None = None,
    method: str | None = None,
    device: str | None = None,
    runs_dir: str | Path | None = None,
    seed: int | None = None,
    budget: str | Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    run_id: str | None = None,
    console: Console | None = None,
    quiet: bool = False,
    seams: Seams | None = None,
    executor: Any = None,
) -> RunResult:
    """Start a run. `seams` are for tests only (agents/core/seams.py). `executor` (a
    `benchmarks.Executor`, kept open: the caller closes it) judges the candidates instead of one
    built from the judge.executor settings."""
    flags: dict[str, Any] = dict(settings or {})
    flags.update(
        {
            "llm": llm,
            "method": method,
            "device": device,
            "seed": seed,
            "runs_dir": str(runs_dir) if runs_dir is not None else None,
        }
    )
    if isinstance(budget, str):
        flags.update(parse_budget(budget))
    elif budget:
        flags.update({f"budget.{k}": v for k, v in budget.items()})
    merged = resolve(flags)
    config = AgentConfig.from_settings(task, merged, run_id=run_id)
    return start(config, merged, console=console, quiet=quiet, seams=seams, executor=executor)


def start(
    config: AgentConfig,
    settings: Settings | None = None,
    *,
    console: Console | None = None,
    quiet: bool = False,
    seams: Seams | None = None,
    executor: Any = None,
) -> RunResult:
    """Start a run from a complete config (`seams`: tests only, agents/core/seams.py;
    `executor`: as in `run`)."""

    seams = seams or Seams()
    task = _task(config.task)
    device = run_device(config.device, executor.kind if executor is not None else config.executor)
    config.llm = _absolute_replay(config.llm)
    config.runs_dir = str(Path(config.runs_dir).resolve())
    provider = _provider(config, served=[])
    run = RunDir.create(config.runs_dir, config.run_id or new_run_id(task.id))
    config.run_id = run.run_id
    with _owned(run):
        return _start(
            config, settings, run, task, device, provider, console, quiet, seams, executor
        )


def _start(
    config: AgentConfig,
    settings: Settings | None,
    run: RunDir,
    task: Any,
    device: str,
    provider: Provider | None,
    console: Console | None,
    quiet: bool,
    seams: Seams,
    executor: Any = None,
) -> RunResult:
    from profiling import device_fingerprint

    run.write_manifest(
        {
            "run_id": run.run_id,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "task": {"ref": config.task, "id": task.id, "path": str(task.path)},
            "llm": provider.describe() if provider else "offline",
            "device": {"requested": config.device, "resolved": device},
            # the label rows.py reads: a scripted seam's runs are marked scripted everywhere
            "config": {
                **config.to_json(),
                "scripted_measure": seams.scripted,
                "scripted_sweep": seams.scripted_sweep is not None,
            },
            "settings": settings.to_json() if settings else None,
            "versions": _versions(),
            "fingerprint": device_fingerprint(device),
            "git": _git(),
            "argv": sys.argv,
        }
    )
    progress = Progress(console, quiet=quiet)
    ctx = RunContext(
        config=config,
        task=task,
        device=device,
        run=run,
        provider=provider,
        tracker=BudgetTracker(config.budget, ledger=run.path / BUDGET),
        progress=progress,
        seams=seams,
        executor=executor,
    )
    ctx.save_spend()
    progress.start(
        run.run_id,
        task.id,
        device,
        ctx.provider.describe() if provider else "offline",
        config.method,
        str(run.path),
    )
    if (
        provider is None
        and settings is not None
        and settings.sources.get("llm", "").startswith("default")
    ):
        progress.note(
            "no OPENAI_API_KEY or ANTHROPIC_API_KEY set: running the offline policy "
            "(reference kernels + measured tunable search + rule-based diagnosis)",
            style="yellow",
        )
    if device == "cpu":
        progress.note(
            "no GPU: correctness through the Triton CPU interpreter; speed is not measured",
            style="yellow",
        )
    if seams.scripted_measure is not None:
        progress.note("TEST SEAM: re-measurements are scripted, not measured", style="magenta")
    if seams.scripted_sweep is not None:
        progress.note("TEST SEAM: sweeps are scripted, not measured", style="magenta")
    run.event(
        "start",
        task=task.id,
        device=device,
        llm=ctx.provider.describe() if provider else "offline",
        method=config.method,
        offline=provider is None,
        scripted_measure=seams.scripted,
        scripted_sweep=seams.scripted_sweep is not None,
    )
    initial = {
        "run_id": run.run_id,
        "task_id": task.id,
        "iteration": 0,
        "attempts": [],
        "pending": [],
        "last_batch": [],
        "incumbent_id": None,
        "stale": 0,
        "repair_streak": 0,
        "dropouts": [],
        "nocode_errors": 0,
        "replay_served": [],
        "stop_reason": None,
        "finished": False,
    }
    return _drive(ctx, initial)


def resume(
    run_ref: str | Path,
    *,
    runs_dir: str | Path = "runs",
    console: Console | None = None,
    quiet: bool = False,
    seams: Seams | None = None,
    changes: Mapping[str, Any] | None = None,
    executor: Any = None,
) -> RunResult:
    """Continue a run from its checkpoint (after Ctrl-C, kill -9, a crash or an LLM outage).

    `changes` ({dotted key: value}) are settings given with `--resume`: those that may change
    (`Setting.on_resume`: the budget, runs_dir) are written into the run's manifest and said in
    one line each; any other key is a SettingsError, and so is a changed budget for a run that
    has already finished. `seams` are for tests only (agents/core/seams.py); `executor` as in
    `run`."""
    run = RunDir.find(run_ref, runs_dir)
    with _owned(run):
        return _resume(
            run, console=console, quiet=quiet, seams=seams, changes=changes, executor=executor
        )


def _manifest_config(run: RunDir, manifest: dict[str, Any]) -> AgentConfig:
    """The run's config from its manifest; `RunFileError` naming the manifest when it has none."""
    path = run.path / MANIFEST
    lost = "the run cannot be resumed without it (its attempts on disk are kept); start a new run"
    if not isinstance(manifest.get("config"), dict):
        raise RunFileError(path, f"no `config` (the run's settings): {lost}")
    try:
        return AgentConfig.from_json(manifest["config"])
    except (TypeError, ValueError) as exc:
        raise RunFileError(path, f"`config` is not a run's config ({exc}): {lost}") from None


def _manifest_task(run: RunDir, manifest: dict[str, Any]) -> Any:
    """The task the manifest names; `RunFileError` naming the manifest when none loads."""
    path = run.path / MANIFEST
    ref = (
        (manifest.get("task") or {}).get("ref") if isinstance(manifest.get("task"), dict) else None
    )
    if not isinstance(ref, str) or not ref:
        raise RunFileError(
            path, "no `task.ref`: the run cannot be resumed without knowing its task"
        )
    try:
        return _task(ref)
    except (KeyError, TaskError) as exc:
        why = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        raise RunFileError(
            path,
            f"names task {ref!r}, which this checkout cannot load ({why}); resume the run "
            "where that task exists",
        ) from None


def _resume(
    run: RunDir,
    *,
    console: Console | None,
    quiet: bool,
    seams: Seams | None,
    changes: Mapping[str, Any] | None,
    executor: Any = None,
) -> RunResult:
    from agents.core.graph import compile_graph, invoke_config

    manifest = run.manifest()
    config = _manifest_config(run, manifest)
    changes = dict(changes or {})
    given = sorted(changes)
    if changes.pop("runs_dir", None) is not None:
        changes["runs_dir"] = str(run.path.parent.resolve())  # where the run was found
    try:
        changed = config.resume_changes(changes)
    except ValueError as exc:  # a value below its minimum, say
        raise SettingsError(f"--resume {run.run_id}: {exc}") from None
    task = _manifest_task(run, manifest)
    device = (manifest.get("device") or {}).get("resolved") or "cpu"
    kind = executor.kind if executor is not None else config.executor
    if device == "cuda" and run_device("auto", kind) != "cuda" and kind != "ray":
        raise SettingsError(
            f"run {run.run_id} was started on a GPU; resume it on a machine with one"
        )
    progress = Progress(console, quiet=quiet)
    ctx = RunContext(
        config=config,
        task=task,
        device=device,
        run=run,
        provider=None,
        tracker=BudgetTracker(config.budget),
        progress=progress,
        seams=seams or Seams(),
        executor=executor,
    )
    try:
        app = compile_graph(ctx)
        snapshot = app.get_state(invoke_config(ctx))
    except (sqlite3.DatabaseError, ValueError) as exc:  # ValueError: a stored state that
        raise _checkpoint_damaged(run, exc) from None  # does not decode (msgpack)
    values = snapshot.values or {}
    # budget.json is written before and after every model call, the checkpoint after each step:
    # the spend continues from the former (the limits as changed on this resume, if they were)
    ctx.tracker, spend_note = BudgetTracker.resume(
        config.budget, run.path / BUDGET, values.get("spend")
    )
    if values.get("finished") and not snapshot.next and set(changed) - {"runs_dir"}:
        raise SettingsError(
            f"run {run.run_id} had already finished ({values.get('stop_reason')}): "
            f"{', '.join(sorted(set(changed) - {'runs_dir'}))} cannot extend a finished run; "
            "start a new run"
        )
    if changed:
        for key, (_, value) in changed.items():
            manifest["config"][BY_KEY[key].attr] = value
        manifest.setdefault("resumes", []).append(
            {
                "at": datetime.now(UTC).isoformat(timespec="seconds"),
                "changed": {k: [old, new] for k, (old, new) in changed.items()},
            }
        )
        run.write_manifest(manifest)
    try:
        ctx.provider = _provider(config, served=list(values.get("replay_served", [])))
    except ValueError as exc:  # the manifest's model spec does not parse
        raise RunFileError(run.path / MANIFEST, f"config.llm: {exc}") from None
    progress.start(
        run.run_id,
        task.id,
        device,
        ctx.provider.describe() if ctx.provider else "offline",
        config.method,
        str(run.path),
    )
    for key in given:
        old, new = changed.get(key, (None, getattr(config, BY_KEY[key].attr)))
        progress.note(
            f"{key}: {old} -> {new} on resume (saved in the manifest)"
            if key in changed
            else f"{key}: {new}, as before"
        )
    if spend_note:
        progress.note(f"budget: {spend_note}", style="yellow")
    done = {a.id for a in values.get("attempts", [])}
    orphans = [i for i in run.attempt_ids_on_disk() if i not in done]
    damaged = run.damaged_lines()
    for warning in damaged:
        progress.note(f"warning: {warning}", style="yellow")
    run.event(
        "resume",
        checkpoint_next=list(snapshot.next),
        attempts_in_checkpoint=sorted(done),
        attempts_on_disk_only=orphans,
        changed={k: [old, new] for k, (old, new) in changed.items()},
        **({"damaged_lines": damaged} if damaged else {}),
        spend=spend_note,
    )
    if not values:
        progress.note(
            "no checkpoint yet (stopped before the first step): starting from the beginning"
        )
        initial = {
            "run_id": run.run_id,
            "task_id": task.id,
            "iteration": 0,
            "attempts": [],
            "pending": [],
            "last_batch": [],
            "incumbent_id": None,
            "stale": 0,
            "repair_streak": 0,
            "dropouts": [],
            "nocode_errors": 0,
            "replay_served": [],
            "stop_reason": None,
            "finished": False,
        }
        return _drive(ctx, initial, app)
    if not snapshot.next and values.get("finished"):
        progress.note(f"run {run.run_id} had already finished: {values.get('stop_reason')}")
        return _result(ctx, values)
    # A kill can land after a step's writes were saved but before its checkpoint: then nothing
    # is "next" yet the run has not finished; invoking again applies those writes and goes on.
    progress.note(
        f"resuming at {', '.join(snapshot.next)} after round {values.get('iteration', 0)} "
        f"({len(done)} attempts in the checkpoint)"
    )
    return _drive(ctx, None, app)


def _drive(ctx: RunContext, initial: dict[str, Any] | None, app: Any = None) -> RunResult:
    from agents.core.graph import compile_graph, invoke_config
    from benchmarks import ExecutorError

    app = app or compile_graph(ctx)
    try:
        final = app.invoke(initial, invoke_config(ctx), durability="sync")
    except ExecutorError as exc:
        ctx.event("stopped", error=f"ExecutorError: {exc}")
        raise RunError(ctx.run.run_id, f"the judge's executor failed: {exc}", ctx.run.path) from exc
    except KeyboardInterrupt:
        ctx.event(
            "interrupted",
            note="Ctrl-C; completed attempts are on disk, the checkpoint holds the last step",
        )
        ctx.progress.note(
            f"interrupted; continue with: kernforge run --resume {ctx.run.path}", style="yellow"
        )
        raise
    except LLMError as exc:
        ctx.event("stopped", error=f"{type(exc).__name__}: {exc}")
        raise RunError(ctx.run.run_id, f"the model call failed: {exc}", ctx.run.path) from exc
    except sqlite3.DatabaseError as exc:  # during the run: the disk full, the file damaged
        ctx.event("stopped", error=f"{type(exc).__name__}: {exc}")
        raise RunError(
            ctx.run.run_id,
            f"{ctx.run.checkpoint}: the checkpoint could not be read or written (sqlite: {exc})",
            ctx.run.path,
        ) from None
    finally:
        ctx.close_executor()
    return _result(ctx, final)


def _result(ctx: RunContext, values: dict[str, Any]) -> RunResult:
    from agents.core.state import incumbent

    best = incumbent(values)
    kernel = ctx.run.path / "best" / "kernel.py"
    summary_path = ctx.run.path / "summary.json"
    try:
        summary = read_json(summary_path) if summary_path.is_file() else {}
    except RunFileError as exc:
        raise RunFileError(
            exc.where,
            f"{exc.problem}: the run's summary is lost (its attempts and best kernel are kept; "
            "move the file aside to go on without it)",
        ) from None
    return RunResult(
        run_id=ctx.run.run_id,
        run_dir=ctx.run.path,
        finished=bool(values.get("finished")),
        reason=str(values.get("stop_reason") or ""),
        best_attempt=best.id if best else None,
        best_kernel=kernel if best is not None and kernel.is_file() else None,
        summary=summary,
    )


# -- helpers ------------------------------------------------------------------------------------


def run_device(requested: str, executor_kind: str) -> str:
    """The device a run judges on: `benchmarks.resolve_device`, except that a run judged on Ray
    may ask for "cuda" on a machine without a GPU (the cluster's GPUs judge its candidates)."""
    from benchmarks import resolve_device

    if executor_kind == "ray" and requested == "cuda":
        return "cuda"
    return resolve_device(requested)


def _task(ref: Any) -> Any:
    from benchmarks import get_task

    return get_task(ref) if isinstance(ref, str) else ref


def _absolute_replay(spec: str) -> str:
    kind, sep, rest = spec.partition(":")
    if kind == "replay" and sep:
        return f"replay:{Path(rest).expanduser().resolve()}"
    return spec


def _provider(config: AgentConfig, *, served: list[int]) -> Provider | None:
    from agents.core.llm.factory import make_provider

    spec = config.llm
    if spec.startswith("replay:"):
        return make_provider(spec, already_served=served)
    return make_provider(
        spec,
        # every call of this process to the same provider shares one limiter (llm.concurrency,
        # llm.rpm, llm.tpm): the generator's parallel candidates and a bench's runs alike
        limiter=shared_limiter(spec, config.llm_concurrency, config.llm_rpm, config.llm_tpm),
        timeout_s=config.llm_timeout_s,
        max_body_bytes=config.body_bytes,
        retry=RetryPolicy(attempts=config.llm_attempts),
    )


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in (
        "kernforge",
        "torch",
        "triton",
        "langgraph",
        "langgraph-checkpoint-sqlite",
        "pydantic",
    ):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = None
    return out


# the code's revision, stated by whoever starts a run where the checkout's own git cannot be
# trusted (the GPU machine's copy of a working tree carries an older .git): recorded as stated
CODE_REVISION_ENV = "KERNFORGE_CODE_REVISION"


def _git() -> dict[str, Any]:
    stated = os.environ.get(CODE_REVISION_ENV, "").strip()
    if stated:
        return {"revision": stated, "dirty": None, "stated": CODE_REVISION_ENV}

    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(
                ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    revision = git("rev-parse", "HEAD")
    status = git("status", "--porcelain")
    if revision is None:  # not a git checkout (e.g. a copied tree): say nothing about it
        return {"revision": None, "dirty": None}
    return {"revision": revision, "dirty": bool(status) if status is not None else None}
