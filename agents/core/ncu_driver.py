"""Run a candidate once on one GPU shape, for Nsight Compute to profile (`ncu ... python this.py`).

    python agents/core/ncu_driver.py --task-file F --dtype D --candidate C --shape S [--calls N] [--seed N]

Imports only torch and our benchmarks/ package (what the GPU machine has); it is started by the
profile node under `ncu`, never inside the agent's process, and the whole `ncu ... python this.py`
command runs in the judge's sandbox for untrusted code (agents/core/nodes/profile.py, `run_ncu_on`):
the candidate it imports is model-written. Its files are handed in by path, staged where the
sandbox can read them; the repository (this file, benchmarks/) is visible there read-only.

Its stdout is ncu's: the CSV the profile node parses comes down the same pipe that the candidate
writes to, so a candidate can print rows of its own. The profile is therefore advice for the
optimizer's next prompt, never a verdict: the judge alone decides correctness and speed.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--task-file", required=True)
    parser.add_argument("--dtype", required=True)
    parser.add_argument("--candidate", required=True)
    parser.add_argument("--shape", required=True)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    import torch

    from benchmarks import load_task_file

    task = next(t for t in load_task_file(args.task_file) if t.dtype == args.dtype)
    shape = next(s for s in task.shapes if s.name == args.shape)
    spec = importlib.util.spec_from_file_location("kernforge_ncu_candidate", args.candidate)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import {args.candidate}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entry = getattr(module, task.entry_point)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed)
    inputs = task.make_inputs(shape.dims, "standard", gen)
    for _ in range(args.calls):
        entry(*inputs)
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
