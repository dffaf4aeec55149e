"""What the judge's watchdog costs, and how fast it stops a candidate past a limit (CPU).

    PYTHONPATH=$PWD python -m benchmarks.studies.process_limits --out docs/results/process_limits_cpu.md

1. One look (`Watchdog.check`) at a waiting worker, sandboxed and unisolated: median of 200.
2. Share of an evaluation spent looking: `stage_seconds["watchdog"]` of a passing candidate.
3. Limit crossed to kill: the memory hog, the fork bomb and the disk filler of tests/hostile/ run
   in a sandboxed worker past the static check; a probe looks every 2 ms with the same limits and
   notes when the limit is first crossed, the watchdog looks at its own interval; the table gives
   the time from crossing to the watchdog's finding, and from there until the namespace is gone.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.harness import procfs, sandbox
from benchmarks.harness.child import Child, send_inputs
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.harness.messages import CandidateJob, ReadyEvent, ShapeSpec
from benchmarks.harness.watchdog import GiB, MiB, WatchLimits, watch_limits
from benchmarks.loading import get_task

HOSTILE = Path(__file__).resolve().parents[2] / "tests" / "hostile"
LIMITS = WatchLimits(
    memory=1 * GiB, processes=32, folder_bytes=256 * MiB, folder_files=2000, poll_s=0.1
)


def _ready(child: Child, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while not any(isinstance(e, ReadyEvent) for e in child.poll_events()):
        if time.monotonic() > deadline or child.proc.poll() is not None:
            raise RuntimeError(f"worker not ready: {child.stderr_tail()}")
        time.sleep(0.05)


def look_cost(isolate: bool) -> float:
    """Median seconds of one look at a waiting worker."""
    folder = Path(tempfile.mkdtemp(prefix="kf-study-"))
    child = Child(folder, "cpu", isolate=isolate)
    try:
        _ready(child)
        watch = child.watchdog(watch_limits("cpu"))
        times = []
        for _ in range(200):
            t0 = time.perf_counter()
            assert watch.check() is None
            times.append(time.perf_counter() - t0)
        return statistics.median(times)
    finally:
        child.kill()
        shutil.rmtree(folder, ignore_errors=True)


def crossing(name: str) -> tuple[float, float, str]:
    """(ms from the limit crossed to the watchdog's finding, ms to kill the sandbox, message)."""
    task = get_task("softmax_fp32")
    folder = Path(tempfile.mkdtemp(prefix="kf-study-"))
    child = Child(folder, "cpu", isolate=True)
    try:
        shutil.copyfile(HOSTILE / f"{name}.py", folder / "candidate.py")
        shape = task.shapes_for("cpu")[0]
        child.submit(
            CandidateJob(
                task_path=child.stage(task.path),
                dtype=task.dtype,
                candidate_path=str(folder / "candidate.py"),
                device="cpu",
                shapes=[ShapeSpec(name=shape.name, dims=dict(shape.dims))],
                modes=["standard"],
                trials=1,
                seed=None,
                perf=False,
            )
        )
        send_inputs(folder, 0)  # the seed the judge would send after the import
        watch, probe = child.watchdog(LIMITS), child.watchdog(LIMITS)
        crossed = None
        deadline = time.perf_counter() + 300
        while time.perf_counter() < deadline:
            now = time.perf_counter()
            if crossed is None and probe.check() is not None:
                crossed = now
            if watch.due(now) and (over := watch.check()) is not None:
                found = time.perf_counter()
                child.kill()
                killed = time.perf_counter()
                start = crossed if crossed is not None else found
                return (found - start) * 1e3, (killed - found) * 1e3, over.message
            time.sleep(0.002)
        raise RuntimeError(f"{name}: no limit crossed in 300 s")
    finally:
        child.kill()
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if sandbox.level() != sandbox.BWRAP:
        raise SystemExit(f"needs bubblewrap: {sandbox.detect().reason}")
    looks = {"bwrap": look_cost(True), "unisolated": look_cost(False)}
    config = JudgeConfig(device="cpu", trials=2, prewarm=False)
    shares = []
    for _ in range(3):
        v = evaluate(get_task("softmax_fp32"), HOSTILE / "good_softmax.py", config)
        assert v.passed, v.message
        shares.append((v.stage_seconds["watchdog"], v.stage_seconds["child"]))
    rows = [
        (name, *crossing(name)) for name in ("res_memory_hog", "res_fork_bomb", "res_disk_filler")
    ]
    lines = [
        "# The judge's watchdog on the CPU: cost and reaction time",
        "",
        f"- Date: {time.strftime('%Y-%m-%d')}; host processes: {len(procfs.pids())}; "
        f"command: `PYTHONPATH=$PWD python -m benchmarks.studies.process_limits --out {args.out}`",
        f"- Limits in part 3: {LIMITS}",
        "",
        "| one look at a waiting worker | median of 200 |",
        "|---|---|",
        *(f"| {k} | {v * 1e6:.0f} µs |" for k, v in looks.items()),
        "",
        "| evaluation of good_softmax (trials=2) | watchdog s | worker s | share |",
        "|---|---|---|---|",
        *(f"| {i + 1} | {w:.3f} | {c:.2f} | {w / c:.2%} |" for i, (w, c) in enumerate(shares)),
        "",
        "| candidate | crossed → found (ms) | found → namespace gone (ms) | verdict message |",
        "|---|---|---|---|",
        *(f"| {n} | {a:.0f} | {b:.0f} | {m} |" for n, a, b, m in rows),
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
