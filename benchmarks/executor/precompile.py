"""The CPU stage of an evaluation, run ahead of the GPU on CPU worker processes.

What can happen before a candidate needs its GPU:

- the static check (pure text: the candidate is parsed, never run). A candidate it rejects is
  answered by the judge without ever starting a worker, so the GPU stage passes it straight
  through;
- on a GPU machine, Triton's compilation of the candidate's kernels for the GPU's architecture
  (`benchmarks.executor.warm_compile`, in the candidate's sandbox, with no GPU visible). The
  Triton cache it fills travels with the request and is copied into this same candidate's
  worker before its judging (`JudgeConfig.triton_cache_seed`), where the first call then finds
  its kernels compiled. Every candidate still has a cache of its own: one candidate's kernels
  never reach another's worker.

On the CPU there is nothing to compile (the Triton interpreter runs the kernel's Python), so the
stage is the static check alone. Nothing here decides a verdict: the judge runs every stage itself.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.executor.request import EvalRequest, load_request_task
from benchmarks.task import Task

WARM_TIMEOUT_S = 180.0
MAX_CACHE_BYTES = 64 << 20  # a compiled cache larger than this is not carried (the judge compiles)
MAX_CACHE_FILES = 4096


@dataclass(frozen=True)
class Precompiled:
    """What the CPU stage found: the static check's outcome and message, the Triton cache it
    compiled (relative path -> bytes; empty when nothing was compiled ahead), why not, seconds."""

    static_ok: bool
    message: str = ""
    seconds: float = 0.0
    triton_files: dict[str, bytes] = field(default_factory=dict)
    compile_note: str = ""


def precompile(request: EvalRequest, target: tuple[int, int] | None = None) -> Precompiled:
    """The static check of `request`'s candidate (no candidate code runs here) and, with a GPU
    `target` (compute capability), its kernels compiled ahead in a sandboxed CPU process."""
    from benchmarks.harness.static_check import check_source

    t0 = time.perf_counter()
    task = load_request_task(request)
    params = [p.name for p in task.signature().parameters.values()]
    found = check_source(
        request.source,
        entry_point=task.entry_point,
        params=params,
        forbidden=task.forbidden,
        filename=request.candidate or "candidate.py",
        entry_kind=task.entry_kind,
    )
    files: dict[str, bytes] = {}
    note = "not compiled ahead: no GPU target" if target is None else ""
    if found.ok and target is not None:
        files, note = compile_ahead(request, task, target)
    elif not found.ok:
        note = "not compiled ahead: the static check failed"
    return Precompiled(found.ok, found.message, time.perf_counter() - t0, files, note)


def compile_ahead(
    request: EvalRequest, task: Task, target: tuple[int, int], timeout_s: float = WARM_TIMEOUT_S
) -> tuple[dict[str, bytes], str]:
    """The Triton cache `benchmarks.executor.warm_compile` fills for this candidate (as
    relative path -> bytes), and a note saying what happened."""
    from benchmarks.harness import integrity, sandbox
    from benchmarks.harness.child import default_root

    config = request.config
    refused = sandbox.refusal(trusted=config.trusted, allow_unisolated=config.allow_unisolated)
    if refused:
        return {}, f"not compiled ahead: {refused}"
    folder = Path(tempfile.mkdtemp(prefix="kf-warm-", dir=default_root()))
    try:
        (folder / "inputs").mkdir()
        staged = integrity.stage(task, folder)
        (folder / "candidate.py").write_text(request.source, encoding="utf-8")
        shapes = [
            dict(s.dims)
            for s in task.shapes_for("cuda")
            if config.shapes is None or s.name in config.shapes
        ]
        spec = {
            "task_path": str(staged),
            "task_id": task.id,
            "candidate_path": str(folder / "candidate.py"),
            "shapes": shapes,
            "arch": target[0] * 10 + target[1],
            "warp_size": 32,
        }
        (folder / "warm.json").write_text(json.dumps(spec), encoding="utf-8")
        program = [sys.executable, "-m", "benchmarks.executor.warm_compile", str(folder)]
        # a CPU worker's sandbox: no GPU device node, and no GPU named to torch either
        launch = sandbox.candidate_launch(folder, "cpu", program)
        # the cache in the bound folder (not the sandbox's private tmpfs), where the host reads it
        cache = folder / ".triton" / "cache"
        env = {**launch.env, "CUDA_VISIBLE_DEVICES": "", "TRITON_CACHE_DIR": str(cache)}
        with open(folder / "warm.log", "wb") as log:
            proc = subprocess.Popen(
                launch.argv,
                cwd=folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                preexec_fn=launch.preexec_fn,  # noqa: PLW1509 - setrlimit calls only
            )
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return {}, f"not compiled ahead: ran past {timeout_s:.0f} s"
        files, why = _collect(cache)
        outcomes = _outcomes(folder)
        return files, why or f"compiled ahead: {len(files)} cache file(s); calls: {outcomes}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _collect(cache: Path) -> tuple[dict[str, bytes], str]:
    """Every file under `cache` (relative path -> bytes), or nothing when it is too large."""
    if not cache.is_dir():
        return {}, "not compiled ahead: no Triton cache was written"
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(p for p in cache.rglob("*") if p.is_file() and not p.is_symlink()):
        total += path.stat().st_size
        if total > MAX_CACHE_BYTES or len(files) >= MAX_CACHE_FILES:
            return (
                {},
                f"not compiled ahead: the cache passed {MAX_CACHE_BYTES >> 20} MiB or {MAX_CACHE_FILES} files",
            )
        files[str(path.relative_to(cache))] = path.read_bytes()
    return files, ""


def _outcomes(folder: Path) -> str:
    try:
        outcomes = json.loads((folder / "warm_result.json").read_text(encoding="utf-8"))
        return ", ".join(str(o)[:120] for o in outcomes) or "none"
    except (OSError, ValueError):
        return "the compile process wrote no result"


def seed_folder(staged: Precompiled | None, root: Path) -> Path | None:
    """A folder under `root` holding the Triton cache `staged` carries, or None when it carries
    none. The caller removes it after the judging."""
    if staged is None or not staged.triton_files:
        return None
    folder = Path(tempfile.mkdtemp(prefix="kf-seed-", dir=root))
    for rel, data in staged.triton_files.items():
        target = (folder / rel).resolve()
        if not target.is_relative_to(folder.resolve()):
            continue  # a path that leaves the folder is not the cache's
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return folder
