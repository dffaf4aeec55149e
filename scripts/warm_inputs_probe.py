"""What the executor's compile-ahead stage spends per GPU shape: making the task's inputs (real
CPU tensors, or shape-only ones on the meta device) and compiling the generated kernel for a GPU
target, on a machine with or without a GPU.

    PYTHONPATH=. .venv/bin/python scripts/warm_inputs_probe.py [SUITE] [ARCH]   # serving, 90

For each task of the suite that the offline code generator translates, and each GPU shape: the
seconds to make shape-only inputs and compile on them, then to make real CPU inputs and call
again (a call of 0.00 s found its kernels compiled: the shape-only compile is the one real
inputs look up). One line per shape on stdout.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)


def main(argv: list[str]) -> int:
    import torch

    from agents.offline.codegen.translate import NotSupported, generate
    from benchmarks.executor.warm_compile import ShapeOnlyInputs, compile_only
    from benchmarks.harness.worker import load_module
    from benchmarks.suites import suite_tasks

    suite = argv[1] if len(argv) > 1 else "serving"
    arch = int(argv[2]) if len(argv) > 2 else 90
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="kf-warm-probe-")
    compile_only(arch, 32)
    for task in suite_tasks(suite):
        try:
            source = generate(task).source
        except NotSupported as exc:
            print(f"{task.id}: no generated kernel ({str(exc)[:80]})")
            continue
        path = Path(tempfile.mkdtemp()) / "candidate.py"
        path.write_text(source)
        entry = getattr(load_module(str(path), f"probe_{task.id}"), task.entry_point)
        for shape in task.shapes:
            row = [f"{task.id} {shape.name}:"]
            for label, shape_only in (("shape-only", True), ("CPU", False)):
                gen = torch.Generator().manual_seed(0)
                t0 = time.perf_counter()
                outcome = "compiled"
                t1 = t0
                try:
                    if shape_only:
                        with ShapeOnlyInputs():
                            args = task.make_inputs(shape.dims, "standard", gen)
                    else:
                        args = task.make_inputs(shape.dims, "standard", gen)
                    t1 = time.perf_counter()
                    with torch.no_grad():
                        task.bind_candidate(entry, shape.dims, "cpu")(*args)
                except Exception as exc:  # noqa: BLE001 - a probe: say what failed, go on
                    outcome = f"{type(exc).__name__}: {str(exc)[:60]}"
                t2 = time.perf_counter()
                row.append(f"{label} inputs {t1 - t0:.3f} s, call {t2 - t1:.2f} s ({outcome});")
            print(" ".join(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
