"""Times of every task's reference solution next to PyTorch eager, with the roofline: the per-task
table of issue #3, fast enough for all tasks in one device call.

    python -m benchmarks.studies.solution_times --device cuda [--suite lite | --tasks a,b] [--compile]
        [--verdicts sweep.json] [--solutions DIR] --out docs/results/solution_times_h200.md

Unlike `benchmarks.studies.solutions_table` (the whole judge per task: correctness trials in a child
process, baselines in another), this times in ONE process: the solutions are our own trusted
code, and their correctness comes from a judge run given with `--verdicts` (the JSON that
`solutions_table --no-perf` writes), whose pass/fail each row shows. Timing is the judge's
(`profiling.timing.time_cuda`: L2 flushed before each call, CUDA events, median), with a shorter
run per measurement (`--rep-ms`). torch.compile is timed only with `--compile` (compiling every
shape of every task takes longer than a device call allows); otherwise its column says
"not measured". `--compile-jobs N` first compiles every task's baseline in N processes at once,
untimed, so the timing process finds Inductor's and Triton's on-disk caches warm. Rows are written after every task, so a run cut short keeps what it measured.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from benchmarks.loading import load_all
from benchmarks.solutions import add_solutions_option, solution_file, solutions_dir
from benchmarks.studies.solutions_table import load_verdicts, select
from benchmarks.task import Task
from profiling import geomean


def _fmt(value: float | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def precompile(task_id: str, device: str) -> tuple[str, float, str]:
    """Compile the task's eager baseline with torch.compile on every shape of `device`, so the
    on-disk caches (Inductor's FX graph cache, Triton's kernel cache) are warm when the timing
    process compiles the same graphs. Returns (task id, seconds, error or "")."""
    import torch

    from benchmarks.harness.precision import full_precision
    from benchmarks.harness.worker import trial_seed

    t0 = time.perf_counter()
    task = load_all()[task_id]
    try:
        eager = getattr(task.module, getattr(task.module, "BASELINE", None) or task.entry_point)
        compiled = torch.compile(eager, dynamic=False)
        gen = torch.Generator(device=device)
        with full_precision():  # as the timing process compiles it
            for shape in task.shapes_for(device):
                gen.manual_seed(trial_seed(0, shape.name, "perf", 0))
                compiled(*task.make_inputs(shape.dims, "standard", gen))
        if device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
        return task_id, time.perf_counter() - t0, ""
    except Exception as exc:  # noqa: BLE001 - the timing process reports compile failures itself
        return task_id, time.perf_counter() - t0, f"{type(exc).__name__}: {str(exc)[:200]}"


def precompile_all(task_ids: list[str], device: str, jobs: int) -> list[tuple[str, float, str]]:
    """`precompile` for every task in `jobs` spawned processes (compilation is CPU work; nothing
    is timed while it runs)."""
    import concurrent.futures as cf
    import multiprocessing as mp

    with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn")) as pool:
        return list(pool.map(precompile, task_ids, [device] * len(task_ids)))


def time_task(
    task: Task, rep_ms: float, with_compile: bool, peaks: Any, solutions: Path
) -> list[dict[str, Any]]:
    """One row per GPU shape: solution (from `solutions`), eager (and compile) medians in µs,
    roofline numbers."""
    import torch

    from benchmarks.harness.perf import peak_flops_for, roofline_fields
    from benchmarks.harness.worker import load_module, trial_seed
    from profiling import time_cuda

    solution = getattr(
        load_module(solution_file(solutions, task.name), f"kf_times_{task.name}"), task.entry_point
    )
    eager = getattr(task.module, getattr(task.module, "BASELINE", None) or task.entry_point)
    compiled = torch.compile(eager, dynamic=False) if with_compile else None
    bandwidth, _ = peaks.bandwidth()
    peak_flops, _, peak_label = peak_flops_for(task, peaks)
    gen = torch.Generator(device="cuda")
    rows = []
    for shape in task.shapes:
        row: dict[str, Any] = {
            "task": task.id,
            "shape": shape.name,
            "phase": shape.phase,
            "weight": shape.weight,
            "dims": shape.dims,
        }
        try:
            gen.manual_seed(trial_seed(0, shape.name, "perf", 0))
            args = task.make_inputs(shape.dims, "standard", gen)
            timing = {"rep_ms": rep_ms, "warmup_ms": 5.0, "max_reps": 300}
            row["solution_us"] = time_cuda(lambda a=args: solution(*a), **timing).median_us
            row["eager_us"] = time_cuda(lambda a=args: eager(*a), **timing).median_us
            if compiled is not None:
                row["compile_us"] = time_cuda(lambda a=args: compiled(*a), **timing).median_us
            row.update(
                roofline_fields(
                    task.flops(shape.dims),
                    task.min_bytes(shape.dims),
                    row["solution_us"],
                    peak_flops,
                    bandwidth,
                )
            )
            row["ceiling"] = peak_label
            del args
        except Exception as exc:  # noqa: BLE001 - one shape failing must not lose the table
            row["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            traceback.print_exc()
        torch.cuda.empty_cache()
        rows.append(row)
    return rows


def summary(rows: list[dict[str, Any]]) -> list[str]:
    """The table in a few numbers: over every shape timed, the median attainment and the geomean
    speedups of the solution over eager and over torch.compile (where compile was timed)."""
    timed = [r for r in rows if r.get("solution_us")]
    attain = sorted(r["attainment"] for r in timed if r.get("attainment") is not None)
    eager = [r["eager_us"] / r["solution_us"] for r in timed if r.get("eager_us")]
    compiled = [r["compile_us"] / r["solution_us"] for r in timed if r.get("compile_us")]
    lines = [
        f"- shapes timed: {len(timed)} of {len(rows)} (tasks: {len({r['task'] for r in timed})})"
    ]
    if attain:
        lines.append(f"- median roofline attainment: {statistics.median(attain):.2f}")
    ge = geomean(eager) if eager else None
    gc = geomean(compiled) if compiled else None
    lines.append(f"- geomean speedup over eager: {_fmt(ge, '.2f')} ({len(eager)} shapes)")
    if compiled:
        faster = sum(1 for v in compiled if v > 1.0)
        lines.append(
            f"- geomean speedup over torch.compile: {_fmt(gc, '.2f')} ({len(compiled)} shapes; "
            f"the solution is faster on {faster}, torch.compile on {len(compiled) - faster})"
        )
    else:
        lines.append("- speedup over torch.compile: not measured (run with --compile)")
    return lines


def render(rows: list[dict[str, Any]], verdicts: dict[str, dict], header: list[str]) -> str:
    lines = header + ["", "## Summary", "", *summary(rows), "", "## Per shape", "",
        "| task | judge | shape | phase | solution µs | eager µs | compile µs | × eager | × compile | roofline µs | attainment | IOU | MFU | note |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]  # fmt: skip
    for r in rows:
        v = verdicts.get(r["task"])
        judged = (
            "—" if v is None else ("pass" if v.get("passed") else f"FAIL {v.get('error_class')}")
        )
        sol, eag, comp = r.get("solution_us"), r.get("eager_us"), r.get("compile_us")
        speed = eag / sol if sol and eag else None
        speed_c = comp / sol if sol and comp else None
        notes = [r["error"]] if r.get("error") else []
        roof = r.get("roofline_us")
        for label, value in (("eager", eag), ("compile", comp)):
            if roof and value and value < 0.95 * roof:
                notes.append(
                    f"{label} below the roofline ({roof / value:.2f}x): not the task's precision, or a peak set too low"
                )
        lines.append(
            f"| {r['task']} | {judged} | {r['shape']} | {r['phase']} | {_fmt(sol, '.1f')} | {_fmt(eag, '.1f')} | "
            f"{_fmt(comp, '.1f') if 'compile_us' in r else 'not measured'} | {_fmt(speed, '.2f')} | "
            f"{_fmt(speed_c, '.2f') if 'compile_us' in r else 'not measured'} | "
            f"{_fmt(r.get('roofline_us'), '.2f')} | {_fmt(r.get('attainment'), '.2f')} | {_fmt(r.get('iou'), '.2f')} | "
            f"{_fmt(r.get('mfu'), '.3f')} | {'; '.join(notes)} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.studies.solution_times")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tasks", default="")
    parser.add_argument("--suite", default=None)
    parser.add_argument(
        "--compile",
        action="store_true",
        help="also time torch.compile (slow: compiles every shape)",
    )
    parser.add_argument("--rep-ms", type=float, default=20.0)
    parser.add_argument(
        "--compile-jobs",
        type=int,
        default=0,
        help="with --compile: first compile every task in N processes at once (warms the on-disk caches), then time",
    )
    parser.add_argument(
        "--verdicts",
        default=None,
        help="JSON file(s) of judge verdicts (solutions_table --no-perf output), comma-separated",
    )
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--from-jsonl",
        default=None,
        help="re-render rows measured earlier, from one or more (comma-separated) .jsonl files, in task order (with --header-from, a file whose header is kept)",
    )
    parser.add_argument("--header-from", default=None)
    add_solutions_option(parser)
    args = parser.parse_args(argv)
    verdicts = load_verdicts(args.verdicts)
    if args.from_jsonl:
        return _rerender(args, argv, verdicts)
    if args.device != "cuda":
        print("solution times need a GPU: not measured", file=sys.stderr)
        return 2
    import torch

    from benchmarks.harness.precision import full_precision
    from profiling import device_fingerprint, get_peaks

    if not torch.cuda.is_available():
        print("no CUDA GPU here: not measured", file=sys.stderr)
        return 2
    solutions = solutions_dir(parser, args.solutions)
    tasks = select(load_all(), args.tasks, args.suite, None)
    if args.compile and args.compile_jobs > 0:
        t_pre = time.perf_counter()
        failed = [
            (t, err)
            for t, _, err in precompile_all([t.id for t in tasks], "cuda", args.compile_jobs)
            if err
        ]
        print(
            f"precompiled {len(tasks)} tasks in {time.perf_counter() - t_pre:.0f} s with {args.compile_jobs} processes; {len(failed)} failed: {failed[:5]}",
            flush=True,
        )
    peaks = get_peaks("cuda")
    fp = device_fingerprint("cuda")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for i, task in enumerate(tasks):
        with full_precision():  # baselines at the task's stated precision (no cuDNN TF32)
            rows.extend(time_task(task, args.rep_ms, args.compile, peaks, solutions))
        header = [
            "# Reference solutions: times and roofline on " + str(fp.get("gpu_name")),
            "",
            f"- command: `python -m benchmarks.studies.solution_times {' '.join(argv if argv is not None else sys.argv[1:])}`",
            f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
            f"- device: {fp.get('gpu_name')}, driver {fp.get('driver_version')}; torch {fp.get('torch_version')}, triton {fp.get('triton_version')}, python {platform.python_version()}",
            f"- {i + 1} of {len(tasks)} tasks timed in {time.perf_counter() - t0:.0f} s; median of up to 300 calls ({args.rep_ms:g} ms budget) with an L2 flush before each",
            f"- peaks: bandwidth {peaks.bandwidth()[1]}; compute ceiling per task as in the judge (tensor-core tasks: matmul peak of their dtype; others fp32 vector)",
            "- eager and torch.compile compiled and timed under benchmarks.harness.precision.full_precision (no TF32, no reduced-precision GEMM reductions)",
            "- judge column: the verdict of the judge run given with --verdicts (correctness, outliers, fallback), '—' if none",
        ]
        out.write_text(render(rows, verdicts, header))
        out.with_suffix(".jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        print(f"{task.id}: {len(task.shapes)} shapes [{time.perf_counter() - t0:.0f}s]", flush=True)
    return 0


def _rerender(args: argparse.Namespace, argv: list[str] | None, verdicts: dict[str, dict]) -> int:
    """Rows measured earlier, with the judge column from --verdicts; the header of the file that
    measured them is kept, and a line says what was added here."""
    paths = [Path(p) for p in args.from_jsonl.split(",") if p.strip()]
    rows = [json.loads(line) for p in paths for line in p.read_text().splitlines() if line.strip()]
    if len(paths) > 1:  # rows of several calls: in the suite's task order (stable within a task)
        order = {task_id: i for i, task_id in enumerate(load_all())}
        rows.sort(key=lambda r: order.get(r["task"], len(order)))
    header: list[str] = []
    if args.header_from:
        for line in Path(args.header_from).read_text().splitlines():
            if line.startswith(("| task", "## Summary")):
                break
            if not line.startswith("- judge column added afterwards"):
                header.append(line)
    while header and not header[-1].strip():
        header.pop()
    header.append(
        f"- judge column added afterwards: `python -m benchmarks.studies.solution_times {' '.join(argv if argv is not None else sys.argv[1:])}`"
    )
    text = render(rows, verdicts, header)
    shown = [verdicts[t] for t in dict.fromkeys(r["task"] for r in rows) if t in verdicts]
    passed = sum(1 for v in shown if v.get("passed"))
    text += f"\nJudge verdicts: {passed} of the {len(shown)} tasks judged here passed.\n"
    Path(args.out).write_text(text)
    if [p.resolve() for p in paths] != [Path(args.out).with_suffix(".jsonl").resolve()]:
        Path(args.out).with_suffix(".jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
