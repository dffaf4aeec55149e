"""README.md of the worked example (agents/bench/worked_example.py): where, when and how it was made,
what in it is real and what is scripted, and how far it got."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.api import _git, _versions

SCRIPTED_METHODS_NOTE = (
    "rows of the model-driven presets (aka, geak, kernelagent, single-shot) ran on the replay "
    "provider: SCRIPTED replies, not a model. They carry [scripted] in every table and plot."
)


def device_line(device: str, fingerprint: dict[str, Any] | None = None) -> str:
    """The README's device line: from `fingerprint` (recorded on the machine that ran the
    example), else from this machine."""
    from profiling import device_fingerprint

    fp = fingerprint or device_fingerprint(device)
    if device != "cuda":
        return "CPU only: the Triton interpreter checks correctness on small shapes; speed not measured (no GPU)"
    return (
        f"{fp.get('gpu_name')} ({fp.get('sm_count')} SMs, driver {fp.get('driver_version')}, "
        f"CUDA {fp.get('cuda_version')})"
    )


def _speed(value: float | str, notes: list[str]) -> str:
    """A speedup, or a footnote mark for why there is none."""
    if isinstance(value, float):
        return f"{value:.2f}x"
    if value not in notes:
        notes.append(value)
    return f"— ({notes.index(value) + 1})"


def _summary_table(summary: list[Any]) -> list[str]:
    lines = [
        "| method | tasks with a correct kernel | runs correct | geomean x eager | geomean x torch.compile |",
        "|---|---|---|---|---|",
    ]
    notes: list[str] = []
    for m in summary:
        lines.append(
            f"| {m.label} | {m.tasks_correct}/{m.tasks} | {m.runs_correct}/{m.runs} | "
            f"{_speed(m.geomean_eager, notes)} | {_speed(m.geomean_compile, notes)} |"
        )
    return lines + ["", *(f"({i}) {n}" for i, n in enumerate(notes, start=1))]


NOTES = "NOTES.md"


def _notes(out: Path) -> list[str]:
    """<out>/NOTES.md (what the numbers show, written by a person), kept across re-renders."""
    path = out / NOTES
    if not path.is_file():
        return []
    return [path.read_text(encoding="utf-8").rstrip(), ""]


def _in_plan_order(plan: Any, outcomes: list[Any]) -> list[Any]:
    """Outcomes in the plan's cell order (parallel workers finish them in any order)."""
    order = {cell: i for i, cell in enumerate(plan.cells())}
    return sorted(outcomes, key=lambda o: order.get(o.cell, len(order)))


def run_history(bench: Path, sessions: list[dict[str, Any]]) -> dict[str, tuple[int, str, float]]:
    """run id -> (session number from 1, "ran" or "resumed", seconds) of the call that last ran
    it, from the bench's events (a run finished in an earlier call is "complete" in later ones)."""
    path = bench / "events.jsonl"
    starts = [s["started"] for s in sessions]
    history: dict[str, tuple[int, str, float]] = {}
    if not path.is_file():
        return history
    for line in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line) if line.strip() else {}
        if event.get("event") != "cell" or event.get("status") not in ("ran", "resumed"):
            continue
        number = sum(1 for started in starts if started <= event["t"]) or 1
        history[event["run_id"]] = (number, event["status"], float(event.get("seconds", 0.0)))
    return history


def _outcome_table(
    outcomes: list[Any], history: dict[str, tuple[int, str, float]] | None = None
) -> list[str]:
    lines = [
        "| task | method | run | attempts | correct | seconds | finish reason |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        message = o.message.replace("|", "\\|")[:140]
        status, seconds = o.status, o.seconds
        earlier = (history or {}).get(o.cell.run_id)
        if earlier and o.status == "complete":
            number, how, seconds = earlier
            status = f"{how} in session {number}"
        elif o.status in ("ran", "resumed"):
            status = f"{o.status} in this session"
        lines.append(
            f"| {o.cell.task} | {o.cell.method} | {status} | {o.attempts} | "
            f"{'yes' if o.correct else 'no'} | {seconds:.0f} | {message} |"
        )
    return lines


def _sessions_table(sessions: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| started (UTC) | device | workers | status | wall s | runs | command |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in sessions:
        cells = ", ".join(f"{n} {k}" for k, n in s.get("cells", {}).items())
        lines.append(
            f"| {s['started']} | {s['device']} | {s.get('workers', 1)} | {s['status']} | "
            f"{s['wall_s']:.0f} | {cells} | "
            f"`{' '.join(s['argv'])}` |"
        )
    return lines


def title(plan: Any) -> str:
    """What the example ran: a whole suite (lite, serving) or the tasks listed, and whether
    scripted presets ran beside the offline policy."""
    from benchmarks import suite_tasks

    tasks = set(plan.tasks)
    lite = {t.id for t in suite_tasks("lite")}
    where = f"{len(tasks)} tasks" + (" of the lite suite" if tasks < lite else "")
    for suite in ("lite", "serving"):
        if tasks == {t.id for t in suite_tasks(suite)}:
            where = f"the {suite} suite"
    beside = ", beside the presets on scripted replies" if set(plan.methods) - {"offline"} else ""
    return f"Worked example: the offline policy on {where}{beside}"


def write_readme(
    out: Path,
    plan: Any,
    outcomes: list[Any],
    summary: list[Any],
    info: dict[str, Any],
    sessions: list[dict[str, Any]],
) -> Path:
    """Write <out>/README.md; `info` holds the knowledge-base note, the pairs count, the script's
    name and this session's record."""
    session = info["session"]
    # what the machine that ran it had (recorded in the session), else this machine's
    git = session.get("git") or _git()
    found = session.get("versions") or _versions()
    versions = ", ".join(f"{k} {v or 'not installed'}" for k, v in found.items())
    budget = ", ".join(f"{k.removeprefix('budget.')}={v}" for k, v in plan.budget.items())
    settings = ", ".join(f"{k}={v}" for k, v in plan.settings.items())
    total_wall = sum(s.get("wall_s", 0.0) for s in sessions)
    incomplete = session["status"] in ("deferred", "interrupted", "stopped")
    lines = [f"# {title(plan)}", ""]
    if set(plan.methods) - {"offline"}:
        lines += [
            f"> **Scripted:** {SCRIPTED_METHODS_NOTE} Only the `offline` rows are the agent's own "
            "work: its kernels are written by rules from the task's PyTorch reference or "
            "retrieved from the knowledge base with the task hidden.",
            "",
        ]
    lines += [
        "Open [report.html](report.html) (self-contained, every plot inline) or read "
        "[report.md](report.md); the error -> fix pairs are in [pairs/](pairs/).",
        "",
        "## Provenance",
        "",
        f"- device: {device_line(session['device'], session.get('fingerprint'))}",
        f"- this session: started {session['started']}, wall time {session['wall_s']:.0f} s "
        f"(status: {session['status']}); all sessions together: {total_wall:.0f} s"
        + (
            f"; runs in {session['workers']} worker processes at once, each on its own GPU "
            "(kernforge bench --workers), so no two runs timed kernels on one GPU"
            if session.get("workers", 1) > 1 and session["device"] == "cuda"
            else ""
        ),
        f"- versions: {versions}",
        f"- code: kernforge git {git.get('revision') or 'unknown'}"
        + (" (with uncommitted changes)" if git.get("dirty") else "")
        + (f" (stated by the caller through {git['stated']})" if git.get("stated") else ""),
        f"- command: `{' '.join(session['argv'])}`",
        f"- tasks: {len(plan.tasks)} ({', '.join(plan.tasks)})",
        f"- methods: {', '.join(plan.methods)}; one seed; "
        + (
            "hidden provenance (benchmark mode) on"
            if plan.benchmark
            else "hidden provenance OFF (--no-benchmark): see below"
        ),
        f"- budget per run: {budget}; settings: {settings or 'defaults'}",
        f"- knowledge base: {info['knowledge']}",
    ]
    if info.get("stale_kernels"):
        lines.append(
            f"- changed since the snapshot was recorded: {', '.join(info['stale_kernels'])} "
            "(their current source was served)"
        )
    scripted = bool(set(plan.methods) - {"offline"})
    if scripted:
        lines.append(
            f"- replay script: [{info['script']}]({info['script']}) (agents/bench/scripted_replies.py)"
        )
    lines += [f"- error -> fix pairs exported: {info.get('pairs')}", ""]
    if incomplete:
        lines += [
            f"**Incomplete** ({session['status']}): runs not finished are listed below; the same "
            "command continues them (finished runs are kept and skipped).",
            "",
        ]
    lines += [
        "## What is real and what is scripted" if scripted else "## What ran",
        "",
        "- `offline`: the offline policy (agents/offline/policy.py), no model. Generator: "
        + (
            "first a kernel written by rules from the task's PyTorch reference where its "
            "structure allows (agents/offline/codegen/translate.py: pointwise, row-wise (scans, "
            "gathers, lookups), whole-tensor and row>total reductions, pads and pools, one GEMM; reads only the reference function, which every method sees), then the "
            "reference kernels the knowledge base retrieves for the task with the task itself "
            "hidden (a neighbour's kernel, adapted to the entry point), moving to the next on a "
            "failure"
            if plan.benchmark
            else "the task's OWN reference kernel first (hidden provenance off), so its rows "
            "measure the repository's reference kernels and the tunable search, not the agent's "
            "ability to write a kernel"
        )
        + "; optimizer: a sweep of many configurations of the kernel's declared tunables, "
        "timed in one GPU worker for a ranking (agents/offline/search.py), whose best few "
        "are judged and re-measured against the incumbent (a coordinate search where no sweep "
        "can be measured). Verdicts and timings are the judge's, on the device above.",
        *(
            [
                "- `aka`, `geak`, `kernelagent`, `single-shot` **[scripted]**: the same graph and "
                "judge, but every model reply comes from the replay script: the task's own "
                "reference kernel, a tunable variant of it, or a deliberately broken variant (a "
                "reply cut off mid-module, or the PyTorch reference pasted in). Their verdicts and "
                "timings are real measurements of scripted kernels; they show how each preset's "
                "loop behaves, not what a model would do."
            ]
            if scripted
            else []
        ),
        "",
        "## Per method",
        "",
        *_summary_table(summary),
        "",
        *_notes(out),
        "## Runs",
        "",
        "Every run of the plan; a run finished by an earlier call names the session (below) "
        "that ran it, and its seconds there.",
        "",
        *_outcome_table(_in_plan_order(plan, outcomes), run_history(plan.out, sessions)),
        "",
        "## Sessions",
        "",
        *_sessions_table(sessions),
        "",
        "## Files",
        "",
        "- `report.html`, `report.md`, `plots/`: `kernforge report` over `bench/`",
        "- `pairs/pairs.jsonl`, `pairs/README.md`: `kernforge pairs export` over `bench/runs/`",
        "- `bench/`: the bench folder (`bench.json` plan, `events.jsonl`, `results.jsonl` and "
        "`results.parquet`, one row per attempt); `bench/runs/` holds each run's attempts",
        *(
            [
                "- `bench_runs.tgz`: `bench/runs/` packed without the finished runs' checkpoint "
                "databases (every attempt's prompt, reply, code, verdict and events); "
                "`tar xzf docs/worked_example/bench_runs.tgz` from the repository root restores it"
            ]
            if (out / "bench_runs.tgz").is_file()
            else []
        ),
        (f"- `{info['script']}`: the replay script; " if scripted else "- ")
        + "`sessions.jsonl`: one line per invocation"
        + (f"; `{NOTES}`: the notes above, written by hand" if (out / NOTES).is_file() else ""),
        "",
    ]
    path = out / "README.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
