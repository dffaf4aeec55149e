"""The launch observer on the GPU machine: what it counts for honest candidates, and what it
costs. Prints one JSON line per evaluation (verdict, wall seconds, per-shape times, the
observation line) and, with --dump, every window's counts of the first evaluation.

    python scripts/diag/observer_probe.py --task softmax_fp16 --solution softmax --repeat 3 --dump
    KERNFORGE_OBSERVER_OFF=1 python scripts/diag/observer_probe.py --task softmax_fp16 ...
"""

from __future__ import annotations

import argparse
import json
import time

from benchmarks.harness import observer
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import get_task
from knowledge_base import solution_path

_seen: list[observer.Windows] = []
_check = observer.check


def _recording_check(
    windows: observer.Windows, timed: bool, device_wide: bool = False
) -> observer.Finding | None:
    _seen.append(windows)
    return _check(windows, timed, device_wide)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", required=True)
    parser.add_argument("--solution", default="")
    parser.add_argument("--candidate", default="")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--dump", action="store_true")
    args = parser.parse_args()
    observer.check = _recording_check  # the judge calls it through the module
    path = args.candidate or solution_path(args.solution)
    config = JudgeConfig(device="cuda", trials=args.trials, timeout_s=300)
    print(json.dumps({"observer": observer.describe("cuda")}))
    for i in range(args.repeat):
        t0 = time.perf_counter()
        v = evaluate(get_task(args.task), path, config)
        wall = time.perf_counter() - t0
        print(
            json.dumps(
                {
                    "i": i,
                    "task": args.task,
                    "candidate": str(path),
                    "passed": v.passed,
                    "error_class": str(v.error_class),
                    "message": v.message[:600],
                    "wall_s": round(wall, 3),
                    "judge_total_s": round(v.stage_seconds.get("total", 0.0), 3),
                    "us": {s.shape: s.candidate_us for s in v.shapes if s.candidate_us},
                    "graph_us": {
                        s.shape: getattr(s, "graph_us", None)
                        for s in v.shapes
                        if getattr(s, "graph_us", None)
                    },
                    "observation": v.launch_observation,
                }
            ),
            flush=True,
        )
    if args.dump and _seen:
        for index, counts in enumerate(_seen[0].counts):
            streams = dict(_seen[0].streams[index]) if index < len(_seen[0].streams) else {}
            ref = _seen[0].refs[index] if index < len(_seen[0].refs) else "?"
            print(
                f"-- window {index}: {sum(counts.values())} launches; streams {streams}, ref {ref}"
            )
            for (origin, name), n in sorted(counts.items(), key=lambda kv: -kv[1]):
                print(f"   {n:6d}  {origin[:40]:40s}  {name[:150]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
