"""Does the judge's clock agree with Nsight Compute? (issue 2: within 5 % on three kernels)

    python -m benchmarks.studies.ncu_agreement [--out docs/results/ncu_agreement.md] [--solutions DIR]

For three reference kernels on large GPU shapes (single-kernel candidates, long enough that launch
overhead is small) we compare:
- the harness: `profiling.timing.time_cuda` median (L2 flushed before every run, CUDA events);
- ncu: `gpu__time_duration.sum` of the same kernel on the same inputs, `--clock-control none`
  (the GPU's own clocks, as in the harness), caches flushed by ncu before each profiled launch,
  median over the profiled launches.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
from pathlib import Path

from benchmarks.solutions import add_solutions_option, solutions_dir

# (task id, shape name, kernel-name regex)
CASES = [
    ("softmax_fp16", "attn_scores_prefill", "_softmax_kernel"),
    ("silu_and_mul_bf16", "llama3_8b_prefill", "_silu_and_mul_kernel"),
    ("rmsnorm_bf16", None, "rmsnorm"),
    ("layernorm_bf16", "falcon_7b_prefill", "_layernorm_kernel"),
    ("gelu_tanh_fp16", None, "_gelu_tanh_kernel"),
]
PROFILED_LAUNCHES = 5


def _setup(task_id: str, shape_name: str | None, solutions: Path):
    import torch

    from benchmarks.harness.worker import load_module
    from benchmarks.loading import get_task
    from benchmarks.solutions import solution_file

    task = get_task(task_id)
    shape = (
        next((s for s in task.shapes if s.name == shape_name), None)
        if shape_name
        else max(task.shapes, key=lambda s: task.min_bytes(s.dims))
    )
    fn = getattr(
        load_module(solution_file(solutions, task.name), f"kf_sol_{task.name}"), task.entry_point
    )
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    args = task.make_inputs(shape.dims, "standard", gen)
    return task, shape, fn, args


def child(case_index: int, solutions: Path) -> None:
    """Run under ncu: warm up, then launch the kernel PROFILED_LAUNCHES times."""
    import torch

    task_id, shape_name, _ = CASES[case_index]
    _, _, fn, args = _setup(task_id, shape_name, solutions)
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    for _ in range(PROFILED_LAUNCHES):
        fn(*args)
    torch.cuda.synchronize()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.studies.ncu_agreement")
    parser.add_argument("--out", default=None)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    add_solutions_option(parser)
    args = parser.parse_args(argv)
    solutions = solutions_dir(parser, args.solutions)
    if args.child is not None:
        child(args.child, solutions)
        return 0
    from profiling import device_fingerprint, ncu_available, run_ncu, summarize, time_cuda

    if not ncu_available():
        print("ncu is not installed here: nothing measured", file=sys.stderr)
        return 2
    rows = []
    worst = 0.0
    for i, (task_id, shape_name, regex) in enumerate(CASES):
        task, shape, fn, fargs = _setup(task_id, shape_name, solutions)
        fn(*fargs)
        harness = time_cuda(lambda f=fn, a=fargs: f(*a)).median_us
        kernels = run_ncu(
            [
                sys.executable,
                "-m",
                "benchmarks.studies.ncu_agreement",
                "--child",
                str(i),
                "--solutions",
                str(solutions),
            ],
            regex,
            launch_count=PROFILED_LAUNCHES,
            launch_skip=3,
            sections=("SpeedOfLight",),
        )
        durations = [d for d in (summarize(k).duration_us for k in kernels) if d is not None]
        ncu_us = statistics.median(durations) if durations else None
        diff = (harness - ncu_us) / ncu_us if ncu_us else None
        if diff is not None:
            worst = max(worst, abs(diff))
        rows.append((task.id, shape.name, str(shape.dims), harness, ncu_us, diff, len(durations)))
        print(rows[-1], flush=True)
    fp = device_fingerprint("cuda")
    lines = [
        "# Harness clock vs Nsight Compute",
        "",
        f"- command: `python -m benchmarks.studies.ncu_agreement {' '.join(argv if argv is not None else sys.argv[1:])}`",
        f"- date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- device: {fp.get('gpu_name')}, driver {fp.get('driver_version')}; torch {fp.get('torch_version')}, triton {fp.get('triton_version')}",
        "- harness: time_cuda median (L2 flush before each run, CUDA events); ncu: median gpu__time_duration.sum over "
        f"{PROFILED_LAUNCHES} launches, --clock-control none, ncu's default cache flush",
        "",
        "| task | shape | dims | harness µs | ncu µs | difference | ncu launches |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for tid, sname, dims, h, n, d, k in rows:
        lines.append(
            f"| {tid} | {sname} | {dims} | {h:.1f} | {'—' if n is None else f'{n:.1f}'} | {'—' if d is None else f'{d:+.1%}'} | {k} |"
        )
    within = sum(1 for r in rows if r[5] is not None and abs(r[5]) <= 0.05)
    ok = all(r[5] is not None for r in rows) and worst <= 0.05
    lines += [
        "",
        f"{within} of {len(rows)} kernels within 5 % of ncu (the issue asks for three); largest difference {worst:.1%}: {'all within' if ok else 'not all within'} 5 %.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
