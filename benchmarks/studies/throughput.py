"""Judging throughput: candidates per minute on the local executor, against a naive loop.

    python -m benchmarks.studies.throughput --device cuda [--batch 32] [--naive 4] \\
        [--tasks silu_fp16,matmul_fp16] [--compile-workers 8,0] [--bench] [--out FILE]

For each task, candidates made from its reference solution, each with a comment of its own inside
its first Triton kernel, so every one is a kernel Triton has not compiled before. Measured:

- naive: `kernforge eval` once per candidate, one after another, each a fresh process with a
  fresh baseline cache (the device's peaks stay cached, as they always were): the loop this
  work replaces. Run on `--naive` candidates; the rate is per minute of that loop;
- cold: a fresh local executor (one lane per GPU, the first `--compile-workers` value) and an
  empty baseline cache, on `--batch` candidates;
- warm: the same executor on `--batch` more new candidates (lanes and their spare workers up,
  baselines cached);
- one warm evaluation of a passing candidate (every shape of the task, cached baselines): a new
  kernel (its Triton compile included), then the same candidate again (its compiled cache reused);
- the warm rate with each further `--compile-workers` value (a fresh executor each, warmed on
  one candidate first);
- with `--bench`: the wall time of `kernforge bench --suite lite --methods offline --llm offline`.

The judge gives every candidate's worker a Triton cache of its own (a shared one would let one
candidate plant kernels for another). With compile workers, the executor's CPU stage compiles each
candidate's kernels ahead and hands that cache to the candidate's worker: a warm Triton cache;
with 0 compile workers the worker compiles them itself: a cold one. On the CPU nothing compiles.
The floors of issue 15 apply to one H200; on the CPU the table is printed without them.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import as_completed
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

from benchmarks.executor.choose import ExecutorSpec, make_executor
from benchmarks.executor.precompile import precompile
from benchmarks.executor.request import EvalRequest
from benchmarks.harness.judge import JudgeConfig, resolve_device
from benchmarks.loading import get_task
from benchmarks.solutions import add_solutions_option, solution_file, solutions_dir
from benchmarks.verdict import Verdict

REPO_ROOT = Path(__file__).resolve().parents[2]
FLOOR_RATIO = 3.0  # executor (warm) / naive loop, 32 elementwise candidates, one H200
FLOOR_WARM_S = 5.0  # one warm evaluation of a passing candidate, cached baselines
FLOOR_BENCH_S = 20 * 60.0  # kernforge bench --suite lite --methods offline


def variants(source: str, count: int, first: int = 0) -> list[str]:
    """`count` copies of `source`, each with its own comment as the first line of the body of
    its first `@triton.jit` function (so Triton sees a new kernel in each)."""
    lines = source.splitlines(keepends=True)
    jit = next((i for i, line in enumerate(lines) if line.strip().startswith("@triton.jit")), None)
    if jit is None:
        raise ValueError("the candidate has no @triton.jit kernel to vary")
    end = next(
        i for i in range(jit + 1, len(lines)) if lines[i].split("#")[0].rstrip().endswith(":")
    )
    body = lines[end + 1]
    indent = body[: len(body) - len(body.lstrip())] or "    "
    return [
        "".join(
            [*lines[: end + 1], f"{indent}# throughput study: variant {k}\n", *lines[end + 1 :]]
        )
        for k in range(first, first + count)
    ]


@dataclass
class Pass:
    """One timed pass: how many candidates, how long, how many passed."""

    label: str
    candidates: int
    seconds: float
    passed: int
    stages: dict[str, float] = field(default_factory=dict)  # median judge seconds per stage

    @property
    def per_minute(self) -> float:
        return 60.0 * self.candidates / self.seconds if self.seconds else 0.0


def naive_loop(task_ref: str, sources: list[str], device: str, work: Path, unsafe: bool) -> Pass:
    """`kernforge eval --json` on each source, one after another, each with a fresh baseline
    cache (the peaks cache copied in, so the device is not recalibrated). Interrupted, it raises
    PassCutShort with the evaluations that had ended."""

    label = "naive loop of `kernforge eval`"
    verdicts: list[object] = []
    t0 = time.perf_counter()
    try:
        for k, source in enumerate(sources):
            verdicts.append(_eval_once(task_ref, source, device, work / f"naive-{k}", unsafe))
    except KeyboardInterrupt:
        cut = f"{label} (cut short: {len(verdicts)} of {len(sources)} ended)"
        raise PassCutShort(_pass(cut, verdicts, time.perf_counter() - t0)) from None
    return _pass(label, verdicts, time.perf_counter() - t0)


def _eval_once(task_ref: str, source: str, device: str, folder: Path, unsafe: bool) -> object:
    """One `kernforge eval --json` in a fresh process: its verdict (a failed one, with the
    process's last words, where it printed none)."""
    from profiling import cache_dir

    folder.mkdir(parents=True)
    (folder / "candidate.py").write_text(source)
    peaks = cache_dir() / "peaks"
    if peaks.is_dir():
        shutil.copytree(peaks, folder / "cache" / "peaks")
    env = {**os.environ, "KERNFORGE_CACHE_DIR": str(folder / "cache")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-m", "agents.cli", "eval", "--task", task_ref, "--json"]
        + ["--candidate", str(folder / "candidate.py"), "--device", device]
        + (["--unsafe-no-isolation"] if unsafe else []),
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return Verdict.model_validate_json(done.stdout[done.stdout.index("{") :])
    except ValueError:
        return Verdict(
            task_id=task_ref,
            candidate=str(folder / "candidate.py"),
            device=device,
            error_class="harness_error",
            message=f"kernforge eval exited {done.returncode}: {done.stderr.strip()[-300:]}",
        )


class PassCutShort(KeyboardInterrupt):
    """An executor pass interrupted (Ctrl-C, a time limit) with what it finished by then."""

    def __init__(self, done: Pass) -> None:
        super().__init__(done.label)
        self.done = done


def stage_medians(verdicts: list[object]) -> dict[str, float]:
    """The median of each judge stage's seconds over `verdicts` (their `stage_seconds`)."""
    seen: dict[str, list[float]] = {}
    for verdict in verdicts:
        for stage, seconds in (getattr(verdict, "stage_seconds", None) or {}).items():
            seen.setdefault(stage, []).append(float(seconds))
    return {stage: median(values) for stage, values in seen.items()}


def executor_pass(executor: object, label: str, requests: list[EvalRequest]) -> Pass:
    """All of `requests` through `executor` at once. Interrupted, it raises PassCutShort with the
    verdicts that had come back (so a pass cut short by a time limit still says how far it got)."""
    t0 = time.perf_counter()
    futures = [executor.submit(r) for r in requests]  # type: ignore[attr-defined]
    verdicts: list[object] = []
    try:
        for future in as_completed(futures):
            verdicts.append(future.result())
    except KeyboardInterrupt:
        cut = f"{label} (cut short: {len(verdicts)} of {len(requests)} came back)"
        raise PassCutShort(_pass(cut, verdicts, time.perf_counter() - t0)) from None
    return _pass(label, verdicts, time.perf_counter() - t0)


def _pass(label: str, verdicts: list[object], seconds: float) -> Pass:
    passed = sum(bool(getattr(v, "passed", False)) for v in verdicts)
    return Pass(label, len(verdicts), seconds, passed, stage_medians(verdicts))


def study_task(
    task_ref: str,
    args: argparse.Namespace,
    device: str,
    solutions: Path,
    work: Path,
    report: Callable[[Pass], None] = lambda p: None,
) -> tuple[list[Pass], list[float | None], str]:
    """The passes of one task, the seconds of the warm single evaluations (a new kernel, then
    the same candidate again; None where it failed), and the executor's name.
    `report` is called with each pass as it ends (so a study cut short keeps what it measured)."""
    task = get_task(task_ref)
    source = solution_file(solutions, task.name).read_text()
    # judged as `kernforge eval` judges: isolated, refused where no isolation exists unless
    # --unsafe-no-isolation
    config = JudgeConfig(
        device=device, baseline_cache=str(work / "baselines"), allow_unisolated=args.unsafe
    )
    made = [0]  # variants handed out so far: every candidate is a new one

    def requests(count: int) -> list[EvalRequest]:
        first, made[0] = made[0], made[0] + count
        return [
            EvalRequest.for_task(task, src, config, label=f"variant {first + k}")
            for k, src in enumerate(variants(source, count, first))
        ]

    passes: list[Pass] = []

    def run(step: Callable[..., Pass], *step_args: object) -> None:
        """One pass, reported as it ends; a pass cut short is reported with what came back."""
        try:
            passes.append(step(*step_args))
        except PassCutShort as cut:
            report(cut.done)
            raise
        report(passes[-1])

    naive = variants(source, args.naive, first=10**6)
    run(naive_loop, task_ref, naive, device, work, args.unsafe)
    workers = args.compile_workers
    spec = ExecutorSpec("local", device=device, lanes=args.lanes, compile_workers=workers[0])
    executor = make_executor(spec)
    try:
        what = _workers_label(workers[0], device)
        run(executor_pass, executor, f"{what}, cold", requests(args.batch))
        # the warm single evaluation right after the cold pass (the executor is warm then), so
        # a study cut short during the warm pass still has it
        one = requests(1)
        run(executor_pass, executor, f"{what}, one warm evaluation (a new kernel)", one)
        single = passes[-1]
        warm_s = [single.seconds if single.passed else None]
        # the same source again (a re-evaluation, an incumbent re-measured): its compiled cache
        # is reused, so this is the judge's own time with the executor warm
        again = [dataclasses.replace(one[0], label="the same variant again")]
        run(executor_pass, executor, f"{what}, the same candidate judged again", again)
        warm_s.append(passes[-1].seconds if passes[-1].passed else None)
        run(executor_pass, executor, f"{what}, warm", requests(args.batch))
        name = executor.describe()
        target = getattr(executor, "target", None)
        if target is not None:  # where one new kernel's compile-ahead spends its seconds
            t0 = time.perf_counter()
            staged = precompile(requests(1)[0].portable(), target)
            name += (
                f"; one more new variant compiled ahead alone: {time.perf_counter() - t0:.2f} s "
                f"({staged.compile_note})"
            )
    finally:
        executor.close()
    for count in workers[1:]:
        with make_executor(
            ExecutorSpec("local", device=device, lanes=args.lanes, compile_workers=count)
        ) as other:
            other.map(requests(1))
            what = _workers_label(count, device)
            run(executor_pass, other, f"{what}, warm", requests(args.batch))
    return passes, warm_s, name


def _stages_text(stages: dict[str, float], most: int = 6) -> str:
    """The longest median stages, 'total 5.1, correctness 2.9, ...' ('-' when none)."""
    top = sorted(stages.items(), key=lambda kv: -kv[1])[:most]
    return ", ".join(f"{k} {v:.2f}" for k, v in top) or "-"


def _workers_label(count: int, device: str) -> str:
    if device != "cuda":
        return f"local, {count} compile workers"
    cache = "Triton cache compiled ahead" if count else "no compile ahead, cold Triton cache"
    return f"local, {count} compile workers ({cache})"


def bench_wall(device: str, work: Path) -> tuple[float, int]:
    """Seconds and exit code of `kernforge bench --suite lite --methods offline --llm offline`."""
    env = {**os.environ}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "agents.cli", "bench", "--suite", "lite", "--methods", "offline"]
        + ["--llm", "offline", "--device", device, "--out", str(work / "bench-lite")],
        cwd=REPO_ROOT,
        env=env,
        check=False,
    )
    return time.perf_counter() - t0, done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.studies.throughput")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--tasks", default="silu_fp16,matmul_fp16")
    parser.add_argument("--batch", type=int, default=32, help="candidates per executor pass")
    parser.add_argument("--naive", type=int, default=4, help="candidates through the naive loop")
    parser.add_argument(
        "--compile-workers",
        default="8,0",
        help="comma-separated counts; the first serves the cold and warm passes (0: no compile ahead)",
    )
    parser.add_argument("--lanes", type=int, default=1, help="CPU lanes (on CUDA: one per GPU)")
    parser.add_argument("--bench", action="store_true", help="also time the lite offline bench")
    parser.add_argument(
        "--unsafe-no-isolation",
        dest="unsafe",
        action="store_true",
        help="UNSAFE: judge without OS isolation where none is available (as kernforge eval's flag)",
    )
    parser.add_argument("--out", default=None)
    add_solutions_option(parser)
    args = parser.parse_args(argv)
    args.compile_workers = [int(c) for c in args.compile_workers.split(",") if c.strip()]
    if (
        not args.compile_workers
        or min(args.compile_workers) < 0
        or args.batch < 1
        or args.naive < 1
    ):
        parser.error("--batch and --naive must be >= 1 and --compile-workers counts >= 0")
    solutions = solutions_dir(parser, args.solutions)
    device = resolve_device(args.device)
    on_gpu = device == "cuda"
    from profiling import device_fingerprint

    fp = device_fingerprint(device)
    lines = [
        f"# Judging throughput ({device})",
        "",
        f"- command: `python -m benchmarks.studies.throughput {' '.join(argv if argv is not None else sys.argv[1:])}`",
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {fp.get('gpu_name') or 'CPU only (Triton interpreter)'}; {os.cpu_count()} CPU cores; "
        f"torch {fp.get('torch_version')}, triton {fp.get('triton_version')}",
        "- candidates: each task's reference solution with a new comment in its kernel "
        "(on a GPU every candidate compiles; benchmarks/studies/throughput.py)",
        "",
        "| task | pass | candidates | passed | wall s | per minute | x naive | median judge stages, s |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    notes: list[str] = []
    details: list[str] = []  # every stage's median per pass, after the notes

    def write(status: str = "") -> str:
        tail = (
            ["", "Median seconds of every judge stage, per pass:", "", *details] if details else []
        )
        text = "\n".join([*lines, "", *notes, *([status] if status else []), *tail]) + "\n"
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(text)
        return text

    try:
        with tempfile.TemporaryDirectory(prefix="kf-throughput-") as tmp:
            for ref in [t.strip() for t in args.tasks.split(",") if t.strip()]:
                work = Path(tmp) / ref
                first: list[Pass] = []

                def row(p: Pass, ref: str = ref, first: list[Pass] = first) -> None:
                    first[:] = first or [p]  # the naive loop comes first: the ratios' base
                    naive = first[0].per_minute
                    ratio = p.per_minute / naive if naive else 0.0
                    lines.append(
                        f"| {ref} | {p.label} | {p.candidates} | {p.passed} | {p.seconds:.1f} | "
                        f"{p.per_minute:.1f} | {ratio:.2f} | {_stages_text(p.stages)} |"
                    )
                    print(lines[-1], flush=True)
                    details.append(
                        f"- {ref}, {p.label}: every median stage, s: "
                        f"{_stages_text(p.stages, most=len(p.stages))}"
                    )
                    write("- (in progress)")

                passes, warm_s, name = study_task(ref, args, device, solutions, work, row)
                naive = passes[0].per_minute
                new, known = warm_s
                warm_text = "; ".join(
                    f"{what} {f'{v:.2f} s' if v is not None else 'not measured (it failed)'}"
                    for what, v in (("a new kernel", new), ("the same candidate again", known))
                )
                notes.append(
                    f"- {ref}: executor `{name}`; one warm evaluation of a passing candidate: {warm_text}"
                )
                if on_gpu and ref.startswith("silu") and new is not None and known is not None:
                    full = [
                        p.per_minute for p in passes[1:] if p.candidates == args.batch
                    ]  # whole batches only
                    best = max(full) / naive if naive and full else 0.0
                    notes.append(
                        f"  - floors: x naive {best:.2f} (floor {FLOOR_RATIO:.0f}, batch {args.batch}): "
                        f"{'meets' if best >= FLOOR_RATIO else 'MISSES'}; warm evaluation (floor "
                        f"{FLOOR_WARM_S:.0f} s): a new kernel {new:.2f} s, "
                        f"{'meets' if new <= FLOOR_WARM_S else 'MISSES'} (its Triton compile "
                        f"included); the same candidate again {known:.2f} s, "
                        f"{'meets' if known <= FLOOR_WARM_S else 'MISSES'}"
                    )
                write("- (in progress)")
            if args.bench:
                seconds, code = bench_wall(device, Path(tmp))
                verdict = "meets" if seconds <= FLOOR_BENCH_S and code == 0 else "MISSES"
                notes.append(
                    f"- `kernforge bench --suite lite --methods offline --llm offline --device {device}`: "
                    f"{seconds / 60:.1f} min, exit {code}"
                    + (f" (floor {FLOOR_BENCH_S / 60:.0f} min: {verdict})" if on_gpu else "")
                )
            else:
                notes.append("- bench wall time: not measured (run with --bench)")
    except KeyboardInterrupt:
        write("- interrupted (Ctrl-C or a time limit): the rows above are the passes that ended")
        print(f"interrupted; the passes that ended are in {args.out or 'the lines above'}")
        return 130
    if not on_gpu:
        notes.append("- no GPU: the interpreter's numbers; the floors apply to one H200")
    print(write())
    return 0


if __name__ == "__main__":
    sys.exit(main())
