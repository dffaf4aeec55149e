"""Triton's compilation of one candidate's kernels for a GPU, done on the CPU, ahead of its judge.

    python -m benchmarks.executor.warm_compile FOLDER     # run by benchmarks.executor.precompile

Compiling is CPU work, and a candidate's first call on the GPU spends most of its time in it; this
program does that part in a CPU worker while the GPU judges another candidate. It runs in the
same sandbox as a candidate's worker, but as a CPU worker: no GPU device node is visible, so the
candidate's code (which runs here) cannot reach the GPU, let alone disturb a timing on it.

It imports the candidate (each of several: a sweep's configurations, variants of one kernel,
share one such process) and calls its entry point once per GPU shape on *shape-only* inputs:
the task's `make_inputs` run with every tensor it creates put on PyTorch's meta device (shapes,
dtypes and strides, no data; `ShapeOnlyInputs`), so a GPU shape's inputs cost about a
millisecond instead of seconds of random numbers on the CPU (up to 16 s for one shape of a
serving task; this CPU machine, 2026-12-03). Triton specializes a kernel on its arguments'
dtypes, on integers' values and on pointers' alignment, which meta tensors (address 0) share
with fresh allocations, so the kernels compiled are the ones the judge's call looks up. Where
the task's inputs or the candidate need data (a length read off a tensor, `.item()`), that
shape is called again on inputs made on the CPU,
with Triton told that the current device is a GPU of the judging machine's architecture
(`FOLDER/warm.json`: arch, warp size) and with every kernel launch turned into a compile
(`JITFunction.run(..., warmup=True)`; an autotuner compiles each of its configs, timing none).
The compiled kernels land in Triton's cache in `FOLDER/.triton/cache`; the executor hands that
cache to this same candidate's judge, whose worker then finds its kernels compiled. The cache is
never given to another candidate (a sweep's worker gets the union of its configurations' caches:
variants of one kernel, timed for a ranking in one process anyway). Nothing here decides anything: a call that fails (garbage
values where a launch would have written, a query of a GPU that is not there) only means fewer
kernels compiled ahead, and the judge compiles the rest itself.
"""

from __future__ import annotations

import json
import os
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any


class ShapeOnlyInputs:
    """A context in which tensors created with a `device=` argument (every factory call of
    `benchmarks.inputs`, which pass the generator's device) are made on the meta device, the
    generator dropped: what follows on them computes shapes only."""

    def __init__(self) -> None:
        from torch.overrides import TorchFunctionMode

        class _Meta(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
                kwargs = dict(kwargs or {})
                if "device" in kwargs:
                    kwargs["device"] = "meta"
                    kwargs.pop("generator", None)
                return func(*args, **kwargs)

        self._mode = _Meta()

    def __enter__(self) -> ShapeOnlyInputs:
        self._mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._mode.__exit__(*exc)


class CompileOnlyDriver:
    """As much of Triton's driver interface as compiling needs, for a GPU this process cannot
    see: the target is given; a benchmark compiles what it would have timed."""

    def __init__(self, arch: int, warp_size: int) -> None:
        from triton.backends.compiler import GPUTarget

        self.target = GPUTarget("cuda", arch, warp_size)

    def get_current_target(self) -> Any:
        return self.target

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def get_benchmarker(self) -> Any:
        def compile_once(kernel_call: Any, quantiles: Any = None, **_: Any) -> list[float]:
            kernel_call()  # every launch compiles only (see compile_only)
            return [1.0, 1.0, 1.0]

        return compile_once

    def is_active(self) -> bool:
        return True


def compile_only(arch: int, warp_size: int) -> None:
    """Make every Triton launch in this process a compile for (arch, warp_size)."""
    from triton.runtime import driver
    from triton.runtime.jit import JITFunction

    driver.set_active(CompileOnlyDriver(arch, warp_size))
    launch = JITFunction.run

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs["warmup"] = True
        return launch(self, *args, **kwargs)

    JITFunction.run = run  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    """`FOLDER`: compile the job in `FOLDER/warm.json` now. `FOLDER --spare ARCH WARP`: a spare
    (see `spare`)."""
    t0 = time.perf_counter()
    folder = Path(argv[1])
    os.environ.pop("TRITON_INTERPRET", None)  # compile for the GPU, not interpret
    if len(argv) == 5 and argv[2] == "--spare":
        return spare(folder, int(argv[3]), int(argv[4]), t0)
    spec = json.loads((folder / "warm.json").read_text(encoding="utf-8"))
    import torch  # noqa: F401 - before Triton's driver is replaced, as the judge's worker has it

    compile_only(int(spec["arch"]), int(spec["warp_size"]))
    return compile_job(folder, spec, f"set up in {time.perf_counter() - t0:.2f} s")


def spare(folder: Path, arch: int, warp_size: int, t0: float) -> int:
    """A compile process started before its job exists: it imports what compiling needs and
    compiles this project's own SiLU kernel (`_warm_up`), then waits for one line on stdin.
    `go` (the host has written `FOLDER/warm.json` and the candidates): the job is compiled and the
    process exits; anything else, or end of input (the host let it go): it exits at once. It
    serves one job only, and no candidate's code runs in it before that job: a spare never
    compiles for two candidates."""
    import torch

    compile_only(arch, warp_size)
    warmed = _warm_up(torch, folder)
    ready = time.perf_counter()
    set_up = f"set up ahead in {ready - t0:.2f} s ({warmed})"
    line = sys.stdin.readline()
    if line.strip() != "go":
        return 0
    spec = json.loads((folder / "warm.json").read_text(encoding="utf-8"))
    if (int(spec["arch"]), int(spec["warp_size"])) != (arch, warp_size):
        (folder / "warm_result.json").write_text(
            json.dumps([f"{set_up}; its target {arch}/{warp_size} is not the job's"]),
            encoding="utf-8",
        )
        return 0
    return compile_job(folder, spec, f"{set_up}, waited {time.perf_counter() - ready:.2f} s")


# what a spare compiles while it waits: this project's own SiLU kernel for its own task, through
# the very path a job takes (task file loaded, shape-only inputs, the entry point called): every
# first-time cost of that path (lazy imports, Triton's compiler loaded) is paid before the job
WARM_UP_TASK = ("benchmarks/tasks/activation/silu.py", "silu_fp16")
WARM_UP_KERNEL = "knowledge_base/kernels/silu.py"


def _warm_up(torch: Any, folder: Path) -> str:
    """Compile WARM_UP_KERNEL for WARM_UP_TASK's first GPU shape, as `compile_job` would; what it
    did, in words. Its cache goes to the sandbox's private scratch folder, never to the cache the
    host collects (`TRITON_CACHE_DIR`, restored afterwards)."""
    from benchmarks.loading import load_task_file

    t0 = time.perf_counter()
    root = Path(__file__).resolve().parents[2]
    collected = os.environ.get("TRITON_CACHE_DIR")
    scratch = Path(os.environ.get("TMPDIR") or folder / "tmp") / "warm-up-cache"
    os.environ["TRITON_CACHE_DIR"] = str(scratch)
    try:
        path, task_id = WARM_UP_TASK
        task = next(t for t in load_task_file(str(root / path)) if t.id == task_id)
        shape = [dict(task.shapes_for("cuda")[0].dims)]
        done = _compile_one(task, str(root / WARM_UP_KERNEL), "kernforge_warm_up", shape, torch)
        return f"warmed up in {time.perf_counter() - t0:.2f} s ({'; '.join(done)})"
    except Exception as exc:  # noqa: BLE001 - a spare that could not warm up still compiles its job
        return f"warm-up failed: {type(exc).__name__}: {str(exc)[:120]}"
    finally:
        if collected is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = collected


def compile_job(folder: Path, spec: dict[str, Any], set_up: str) -> int:
    """Compile every candidate of the job `spec` (warm.json) in this process, whose launches are
    compiles already (`compile_only`); `set_up` says what the process spent before it."""
    import torch

    from benchmarks.loading import load_task_file

    task = next(t for t in load_task_file(spec["task_path"]) if t.id == spec["task_id"])
    # where a compile-ahead's seconds go: the set-up (imports), then each call below
    outcomes: list[str] = [set_up]
    paths = spec["candidate_paths"]
    for n, path in enumerate(paths):
        name = "kernforge_candidate" if len(paths) == 1 else f"kernforge_candidate_{n}"
        outcomes += _compile_one(task, path, name, spec["shapes"], torch)
        # written after each source: a process stopped for time still says what it did
        (folder / "warm_result.json").write_text(json.dumps(outcomes), encoding="utf-8")
    return 0


def _compile_one(task: Any, path: str, name: str, shapes: list[dict], torch: Any) -> list[str]:
    """Import the candidate at `path` as module `name` and call it once per shape (every launch
    a compile); what each step did."""
    from benchmarks.harness.worker import load_module

    try:
        entry = getattr(load_module(path, name), task.entry_point)
    except BaseException as exc:  # noqa: BLE001 - the judge reports import errors, not this
        return [f"import: {type(exc).__name__}: {str(exc)[:200]}"]
    outcomes = []
    gen = torch.Generator()
    for dims in shapes:
        outcome = ""
        t0 = time.perf_counter()
        for label, making in (("shape-only inputs", ShapeOnlyInputs), ("CPU inputs", nullcontext)):
            try:  # shape-only first; a call that needs values fails there and is made again
                gen.manual_seed(0)
                with making():
                    args = task.make_inputs(dims, "standard", gen)
                with torch.no_grad():
                    task.bind_candidate(entry, dims, "cpu")(*args)
                outcome = f"compiled ({label}) in {time.perf_counter() - t0:.2f} s"
                break
            except BaseException as exc:  # noqa: BLE001 - fewer kernels compiled ahead, nothing more
                outcome = f"{type(exc).__name__}: {str(exc)[:200]}"
        outcomes.append(outcome)
    return outcomes


if __name__ == "__main__":
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # no candidate-registered atexit hook runs
