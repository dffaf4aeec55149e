"""What timing decode shapes inside a CUDA graph costs, step by step, and what it measures.

    python -m benchmarks.studies.graph_timing_cost --tasks softmax_fp16,silu_fp32 [--out FILE]

For each decode shape of each task: the reference solution, the eager reference and its
torch.compile, each timed call by call (`profiling.time_cuda`) and inside a CUDA graph
(`benchmarks.harness.graph_timing`), with the wall seconds of every step (copies, capture,
replays). Trusted code only (the task's own solution), in this process: it measures the timing
method, not a candidate. Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any


def _shape_costs(task: Any, shape: Any, fns: dict[str, Any]) -> dict[str, Any]:
    import torch

    from benchmarks.harness.graph_timing import capture, make_copies, time_replay
    from benchmarks.harness.worker import trial_seed
    from profiling import flush_bytes, time_cuda

    gen = torch.Generator(device="cuda")
    gen.manual_seed(trial_seed(0, shape.name, "perf", 0))
    args = task.make_inputs(shape.dims, "standard", gen)
    row: dict[str, Any] = {"shape": shape.name, "dims": dict(shape.dims)}
    t0 = time.perf_counter()
    copies = make_copies(args, flush_bytes())
    torch.cuda.synchronize()
    row["calls"], row["copies_s"] = len(copies), time.perf_counter() - t0
    for label, fn in fns.items():
        t0 = time.perf_counter()
        fn(*args)
        torch.cuda.synchronize()
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        call_us = time_cuda(lambda f=fn: f(*args)).median_us
        call_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        try:
            captured = capture(fn, copies)
            capture_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            graph_us, _, _, reps = time_replay(captured)
            replay_s = time.perf_counter() - t0
            del captured
            error = ""
        except Exception as exc:  # noqa: BLE001 - reported in the table
            graph_us, reps, capture_s, replay_s = None, 0, time.perf_counter() - t0, 0.0
            error = f"{type(exc).__name__}: {str(exc)[:200]}"
        row[label] = {
            "first_call_s": round(first, 3),
            "call_us": call_us,
            "call_timing_s": round(call_s, 3),
            "graph_us": graph_us,
            "capture_s": round(capture_s, 3),
            "replay_timing_s": round(replay_s, 3),
            "replays": reps,
            "error": error,
        }
        torch.cuda.empty_cache()
    return row


def main(argv: list[str] | None = None) -> int:
    import torch

    from benchmarks.harness.graph_timing import wants_graph
    from benchmarks.harness.precision import full_precision
    from benchmarks.harness.worker import load_module
    from benchmarks.loading import get_task
    from benchmarks.solutions import add_solutions_option, solution_file, solutions_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="softmax_fp16,silu_fp32")
    parser.add_argument("--out", default="")
    add_solutions_option(parser)
    opts = parser.parse_args(argv)
    solutions = solutions_dir(parser, opts.solutions)
    if not torch.cuda.is_available():
        print("graph_timing_cost: needs a CUDA GPU (not measured)")
        return 2
    rows = []
    for task_id in opts.tasks.split(","):
        task = get_task(task_id)
        module = load_module(solution_file(solutions, task.name), f"sol_{task.id}")
        for shape in task.shapes:
            if not wants_graph(shape.phase):
                continue
            eager = task.baseline_for(shape.dims)
            with full_precision():
                fns = {
                    "solution": getattr(module, task.entry_point),
                    "eager": eager,
                    "compile": torch.compile(eager, dynamic=False),
                }
                row = {"task": task.id, **_shape_costs(task, shape, fns)}
            print(json.dumps(row), flush=True)
            rows.append(row)
    if opts.out:
        Path(opts.out).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
