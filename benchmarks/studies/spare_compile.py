"""What a spare compile process saves a new kernel's CPU stage (compiled for a Hopper target).

    PYTHONPATH=$PWD python -m benchmarks.studies.spare_compile --out docs/results/spare_compile_cpu.md

The local executor's CPU stage (`benchmarks.executor.precompile.precompile`: static check, then
the candidate's kernels compiled for the GPU's architecture in a sandboxed CPU process) of a
kernel Triton has never seen, `--repeats` times each way:

- no spare: the compile process starts for the job (imports, Triton's compiler loaded on its
  first compile);
- a spare: a compile worker's process set up ahead (`enable_spares`) and warmed up on the
  project's own SiLU kernel, given `--wait` seconds to do so (in a run it sets up while the GPU
  judges another candidate), then handed the job.

Triton cross-compiles, so this runs on any machine (no GPU needed): what it measures is the CPU
stage's wall time on this machine, which on the GPU machine lies on a new kernel's path to its
judge. Each candidate is the knowledge base's GELU-tanh kernel with a comment that makes its source,
hence Triton's cache key, new.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import EvalRequest, JudgeConfig
from benchmarks.executor import precompile as pc
from benchmarks.loading import get_task

TASK = "gelu_tanh_fp16"
# the knowledge base's kernel for it, read as a file (benchmarks does not import knowledge_base)
KERNEL = Path(__file__).resolve().parents[2] / "knowledge_base" / "kernels" / "gelu_tanh.py"
TARGET = (9, 0)


def one(code: str) -> tuple[float, str]:
    """The CPU stage of `code` on TASK for TARGET: its wall seconds and what it said."""
    request = EvalRequest.for_task(get_task(TASK), code, JudgeConfig(device="cuda", trusted=True))
    t0 = time.perf_counter()
    staged = pc.precompile(request.portable(), TARGET)
    seconds = time.perf_counter() - t0
    if not staged.triton_files:
        raise RuntimeError(f"nothing was compiled: {staged.compile_note}")
    return seconds, staged.compile_note


def measure(repeats: int, wait_s: float) -> dict[str, list[tuple[float, str]]]:
    source = KERNEL.read_text(encoding="utf-8")
    rows: dict[str, list[tuple[float, str]]] = {"no spare": [], "a spare": []}
    stamp = time.time_ns()
    for n in range(repeats):
        rows["no spare"].append(one(f"{source}\n# new kernel {stamp}-{n}\n"))
    try:
        pc.enable_spares(TARGET)
        for n in range(repeats):
            time.sleep(wait_s)
            rows["a spare"].append(one(f"{source}\n# new kernel {stamp}-spare-{n}\n"))
    finally:
        pc.drop_spare()
    return rows


def report(rows: dict[str, list[tuple[float, str]]], command: str) -> str:
    import torch
    import triton

    lines = [
        "# A new kernel's CPU stage with and without a spare compile process",
        "",
        f"- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; command: `{command}`",
        f"- Machine: {platform.machine()}, {os.cpu_count()} core(s), no GPU needed ("
        f"Triton cross-compiles for compute capability {TARGET[0]}.{TARGET[1]}); Python "
        f"{platform.python_version()}, torch {torch.__version__}, triton {triton.__version__}",
        f"- Candidate: task `{TASK}`, the knowledge base's GELU-tanh kernel made new per repeat "
        "(a comment), compiled in the sandbox the executor uses",
        "",
        "| CPU stage | median s | each (s) |",
        "|---|---:|---|",
    ]
    for what, got in rows.items():
        times = [s for s, _ in got]
        each = ", ".join(f"{s:.2f}" for s in times)
        lines.append(f"| {what} | {statistics.median(times):.2f} | {each} |")
    lines += ["", "What each compile process said (the first of each way):", ""]
    lines += [f"- {what}: {got[0][1]}" for what, got in rows.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--wait", type=float, default=20.0, help="seconds a spare gets to set up")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    command = "python -m benchmarks.studies.spare_compile" + (
        f" --out {args.out}" if args.out else ""
    )
    text = report(measure(args.repeats, args.wait), command)
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
