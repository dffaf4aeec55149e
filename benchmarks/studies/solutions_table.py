"""Judge every task's reference Triton solution and write the table of times and roofline numbers.

    python -m benchmarks.studies.solutions_table --device cuda [--tasks a,b | --suite lite] [--dtype fp16]
        [--trials 5] [--out docs/results/solutions_h200.md] [--solutions DIR]
    python -m benchmarks.studies.solutions_table --device cuda --no-perf --jobs 8 --out sweep.md
        (correctness only, several judges at once: timings would disturb each other, so
        --jobs above 1 needs --no-perf)

One row per (task, shape): the solution's verdict, its time, eager and torch.compile times, the
speedups, the roofline time, attainment, IOU and MFU. The Markdown file opens with the device,
date, versions and the command that produced it; a JSON file beside it holds every verdict.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime as dt
import json
import multiprocessing as mp
import platform
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from benchmarks.harness.judge import JudgeConfig, evaluate, resolve_device
from benchmarks.loading import load_all
from benchmarks.solutions import add_solutions_option, solution_file, solutions_dir
from benchmarks.task import Task
from benchmarks.verdict import ErrorClass, Verdict


def _f(value: float | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def select(tasks: dict[str, Task], ids: str, suite: str | None, dtype: str | None) -> list[Task]:
    chosen = list(tasks.values())
    if suite:
        from benchmarks.suites import suite_tasks

        chosen = suite_tasks(suite, tasks)
    if ids:
        wanted = [t.strip() for t in ids.split(",") if t.strip()]
        unknown = [t for t in wanted if t not in tasks]
        if unknown:
            raise SystemExit(f"unknown task(s): {', '.join(unknown)}")
        chosen = [tasks[t] for t in wanted]
    if dtype:
        # one variant per task file: the asked dtype where it exists, else the file's first
        by_name: dict[str, Task] = {}
        for t in chosen:
            cur = by_name.get(t.name)
            if cur is None or (t.dtype == dtype and cur.dtype != dtype):
                by_name[t.name] = t
        chosen = list(by_name.values())
    return chosen


def load_verdicts(spec: str | None) -> dict[str, dict]:
    """Task id -> verdict (as JSON) from comma-separated files this script wrote; later files win."""
    verdicts: dict[str, dict] = {}
    for path in filter(None, (spec or "").split(",")):
        verdicts.update({v["task_id"]: v for v in json.loads(Path(path).read_text())})
    return verdicts


def render(verdicts: list[Verdict], header: list[str]) -> str:
    lines = header + [
        "",
        "| task | verdict | shape | phase | solution µs | eager µs | compile µs | × eager | × compile | roofline µs | attainment | IOU | MFU | notes |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for v in verdicts:
        status = "pass" if v.passed else f"FAIL {v.error_class.value}"
        if not v.shapes:
            lines.append(
                f"| {v.task_id} | {status} | — | — | — | — | — | — | — | — | — | — | — | {v.message[:120]} |"
            )
        for s in v.shapes:
            notes = "; ".join(s.notes)[:160]
            lines.append(
                f"| {v.task_id} | {status} | {s.shape} | {s.phase} | {_f(s.candidate_us, '.1f')} | {_f(s.eager_us, '.1f')} | "
                f"{_f(s.compile_us, '.1f')} | {_f(s.speedup_eager, '.2f')} | {_f(s.speedup_compile, '.2f')} | "
                f"{_f(s.roofline_us, '.2f')} | {_f(s.attainment, '.2f')} | {_f(s.iou, '.2f')} | {_f(s.mfu, '.3f')} | {notes} |"
            )
    passed = sum(v.passed for v in verdicts)
    lines += ["", f"{passed} of {len(verdicts)} solutions passed."]
    scored = [v for v in verdicts if v.score is not None]
    if scored:
        lines.append("")
        lines.append(
            "| task | S (median attainment) | geomean × eager | geomean × compile | perf |"
        )
        lines.append("|---|---:|---:|---:|---|")
        for v in scored:
            lines.append(
                f"| {v.task_id} | {v.score:.2f} | {_f(v.geomean_speedup_eager, '.2f')} | {_f(v.geomean_speedup_compile, '.2f')} | {v.perf_status} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.studies.solutions_table")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--tasks", default="")
    parser.add_argument("--suite", default=None)
    parser.add_argument(
        "--dtype", default=None, help="one variant per task file, this dtype where present"
    )
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--out", default=None)
    parser.add_argument("--no-perf", action="store_true", help="correctness and fallback only")
    parser.add_argument(
        "--jobs", type=int, default=1, help="judges at once (needs --no-perf above 1)"
    )
    parser.add_argument(
        "--failed-from",
        default=None,
        help="only tasks that did not pass in these verdict JSON files (comma-separated)",
    )
    add_solutions_option(parser)
    args = parser.parse_args(argv)
    if args.jobs > 1 and not args.no_perf:
        parser.error("--jobs above 1 needs --no-perf: concurrent timings disturb each other")
    solutions = solutions_dir(parser, args.solutions)
    device = resolve_device(args.device)
    tasks = select(load_all(), args.tasks, args.suite, args.dtype)
    if args.failed_from:
        passed = {tid for tid, v in load_verdicts(args.failed_from).items() if v.get("passed")}
        tasks = [t for t in tasks if t.id not in passed]
    verdicts: list[Verdict] = []
    t0 = time.perf_counter()
    for v in _judge_all(tasks, solutions, device, args.trials, not args.no_perf, args.jobs):
        verdicts.append(v)
        print(f"{v.summary_line()} [{v.stage_seconds.get('total', 0):.1f}s]", flush=True)
        if args.out:  # written after every task, so a run cut short keeps what it measured
            _write(args, argv, device, verdicts, t0, len(tasks))
    text = _write(args, argv, device, verdicts, t0, len(tasks))
    print(text)
    return 0 if all(v.passed for v in verdicts) else 1


def _judge_one(task_id: str, solutions: Path, device: str, trials: int, perf: bool) -> dict:
    task = load_all()[task_id]
    return evaluate(
        task,
        solution_file(solutions, task.name),
        JudgeConfig(device=device, trials=trials, perf=perf, trusted=True),
    ).model_dump(mode="json")


def _judge_all(
    tasks: list[Task],
    solutions: Path,
    device: str,
    trials: int,
    perf: bool,
    jobs: int,
    judge_one: Callable[[str, Path, str, int, bool], dict] = _judge_one,
) -> Iterator[Verdict]:
    """Verdicts (of the solutions in `solutions`) in the order they finish; with jobs > 1 from a
    pool of spawned processes, each task in `judge_one` (a module-level function: it is pickled)."""
    if jobs <= 1:
        for task in tasks:
            yield evaluate(
                task,
                solution_file(solutions, task.name),
                JudgeConfig(device=device, trials=trials, perf=perf, trusted=True),
            )
        return
    # A judging process killed from outside (the host's OOM killer, with several big tasks at
    # once) breaks the whole pool and every task then unfinished with it: those are judged again
    # in a fresh pool; a task caught in two broken pools is judged alone, where a death is its own.
    tries: dict[str, int] = {}
    pending = list(tasks)
    while pending:
        broken: list[Task] = []
        shared = [t for t in pending if tries.get(t.id, 0) < 2]
        groups = ([shared] if shared else []) + [[t] for t in pending if tries.get(t.id, 0) >= 2]
        for group in groups:
            for task, verdict in _judge_group(
                group, solutions, device, trials, perf, jobs, judge_one
            ):
                # out of host memory (the kernel's OOM killer) or GPU memory beside other
                # judges: judged again, alone
                crowded = verdict is not None and _crowded(verdict)
                if verdict is not None and (not crowded or len(group) == 1):
                    yield verdict
                    continue
                tries[task.id] = 2 if crowded else tries.get(task.id, 0) + 1
                if len(group) > 1:
                    broken.append(task)
                    continue
                yield _lost(
                    task,
                    solutions,
                    device,
                    "its judging process died (killed from "
                    "outside, e.g. for host memory), also when it was judged alone",
                )
        if broken:
            print(
                f"a judging process died; judging {len(broken)} unfinished task(s) again",
                flush=True,
            )
        pending = broken


def _crowded(verdict: Verdict) -> bool:
    """Whether a failed verdict may be the other judges' doing: its worker was taken by the host's
    OOM killer, or the GPU ran out of memory (a sweep's judges share one GPU)."""
    return not verdict.passed and (
        "host_oom" in verdict.flags or "OutOfMemoryError" in verdict.message
    )


def _judge_group(
    group: list[Task],
    solutions: Path,
    device: str,
    trials: int,
    perf: bool,
    jobs: int,
    judge_one: Callable[[str, Path, str, int, bool], dict],
) -> Iterator[tuple[Task, Verdict | None]]:
    """(task, verdict) for each task of `group` judged in one pool, as they finish; the verdict is
    None when the pool broke (a judging process died) before the task finished."""
    with cf.ProcessPoolExecutor(
        max_workers=min(jobs, len(group)), mp_context=mp.get_context("spawn")
    ) as pool:
        futures = {pool.submit(judge_one, t.id, solutions, device, trials, perf): t for t in group}
        for fut in cf.as_completed(futures):
            task = futures[fut]
            try:
                yield task, Verdict.model_validate(fut.result())
            except BrokenProcessPool:
                yield task, None
            except Exception as exc:  # noqa: BLE001 - a judging process's failure is reported
                yield task, _lost(task, solutions, device, f"{type(exc).__name__}: {exc}")


def _lost(task: Task, solutions: Path, device: str, why: str) -> Verdict:
    return Verdict(
        task_id=task.id,
        candidate=str(solution_file(solutions, task.name)),
        device=device,
        error_class=ErrorClass.HARNESS_ERROR,
        message=f"judging process failed: {why}",
    )


def _write(
    args: argparse.Namespace,
    argv: list[str] | None,
    device: str,
    verdicts: list[Verdict],
    t0: float,
    planned: int,
) -> str:
    fp = verdicts[0].fingerprint if verdicts else {}
    header = [
        f"# Reference solutions judged on {fp.get('gpu_name') or device}",
        "",
        f"- command: `python -m benchmarks.studies.solutions_table {' '.join(argv if argv is not None else sys.argv[1:])}`",
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- device: {fp.get('gpu_name', device)}, driver {fp.get('driver_version')}, CUDA {fp.get('cuda_version')}",
        f"- versions: torch {fp.get('torch_version')}, triton {fp.get('triton_version')}, python {platform.python_version()}",
        f"- trials per mode: {args.trials}; {'performance not measured (--no-perf); ' if args.no_perf else ''}{args.jobs} judge(s) at once; wall time {time.perf_counter() - t0:.0f} s; {len(verdicts)} of {planned} planned tasks judged",
        "- times are medians over many runs with an L2 flush before each; roofline = max(FLOPs / peak, bytes / bandwidth)",
        "  with peaks calibrated on this device (see each row's perf note); attainment = roofline / measured.",
    ]
    text = render(verdicts, header)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        out.with_suffix(".json").write_text(
            json.dumps([v.model_dump(mode="json") for v in verdicts], indent=1)
        )
    return text


if __name__ == "__main__":
    sys.exit(main())
