"""How long the judge takes per candidate, stage by stage.

    python -m benchmarks.studies.harness_speed --device cuda|cpu [--task silu_fp16] [--repeats 3] [--out FILE]

Evaluates the task's reference solution (a correct elementwise candidate) `repeats + 1` times in
one process. The first run warms the Triton cache and, on a GPU, measures the baselines (eager and
torch.compile, cached per process afterwards); the rest are the steady state a bench or an agent
sees. Floors from the issue: a warm full GPU evaluation (all stages, 3 shapes) under 10 s, a CPU
interpreter evaluation under 20 s.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from pathlib import Path

from benchmarks.harness.judge import JudgeConfig, evaluate, resolve_device
from benchmarks.loading import get_task
from benchmarks.solutions import add_solutions_option, solution_file, solutions_dir

FLOOR_S = {"cuda": 10.0, "cpu": 20.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.studies.harness_speed")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--task", default="silu_fp16")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    add_solutions_option(parser)
    args = parser.parse_args(argv)
    solutions = solutions_dir(parser, args.solutions)
    device = resolve_device(args.device)
    task = get_task(args.task)
    path = solution_file(solutions, task.name)
    runs = []
    for i in range(args.repeats + 1):
        t0 = time.perf_counter()
        # the project's own solution: trusted, but isolated wherever isolation exists
        v = evaluate(task, path, JudgeConfig(device=device, trusted=True))
        wall = time.perf_counter() - t0
        if not v.passed:
            print(f"the reference solution failed: {v.summary_line()}", file=sys.stderr)
            return 1
        runs.append((wall, dict(v.stage_seconds), v))
        print(
            f"run {i} ({'cold' if i == 0 else 'warm'}): {wall:.2f} s  "
            + ", ".join(f"{k} {s:.2f}" for k, s in v.stage_seconds.items()),
            flush=True,
        )
    warm = [r[0] for r in runs[1:]]
    median = statistics.median(warm)
    fp = runs[0][2].fingerprint
    stages = sorted({k for _, st, _ in runs for k in st})
    lines = [
        f"# Judge wall time per candidate ({device})",
        "",
        f"- command: `python -m benchmarks.studies.harness_speed {' '.join(argv if argv is not None else sys.argv[1:])}`",
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- machine: {fp.get('gpu_name') or 'CPU only (Triton interpreter)'}; torch {fp.get('torch_version')}, triton {fp.get('triton_version')}",
        f"- task {task.id}, candidate {path.name} (reference solution), {len(task.shapes_for(device))} shapes, 5 trials x 2 modes",
        f"- candidate isolation: {runs[0][2].isolation or 'not recorded'}",
        "",
        "| run | wall s | " + " | ".join(stages) + " |",
        "|---|---:|" + "---:|" * len(stages),
    ]
    for i, (wall, st, _) in enumerate(runs):
        label = "cold (Triton cache and baselines)" if i == 0 else f"warm {i}"
        lines.append(
            f"| {label} | {wall:.2f} | "
            + " | ".join(f"{st.get(k, 0.0):.2f}" for k in stages)
            + " |"
        )
    verdict = "meets" if median < FLOOR_S[device] else "MISSES"
    under = sum(1 for w in warm if w < FLOOR_S[device])
    lines += [
        "",
        f"Warm median: {median:.2f} s (max {max(warm):.2f} s; {under} of {len(warm)} warm runs under the floor); "
        f"floor {FLOOR_S[device]:.0f} s: the median {verdict} it.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
