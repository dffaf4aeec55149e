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

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.executor.request import (
    EvalRequest,
    RemeasureRequest,
    SweepRequest,
    load_request_task,
)
from benchmarks.harness.judge_config import JudgeConfig
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
    return compile_sources([request.source], request.config, task, target, timeout_s)


def compile_sources(
    sources: list[str],
    config: JudgeConfig,
    task: Task,
    target: tuple[int, int],
    timeout_s: float = WARM_TIMEOUT_S,
    *,
    keep_partial: bool = False,
) -> tuple[dict[str, bytes], str]:
    """The Triton cache one sandboxed CPU process (`benchmarks.executor.warm_compile`) fills by
    compiling the kernels of every source in `sources` for `target`, and a note. `keep_partial`:
    a process that runs past `timeout_s` still hands over what it compiled (the cache writes
    each file whole), else nothing."""
    from benchmarks.harness import integrity, sandbox
    from benchmarks.harness.child import default_root

    refused = sandbox.refusal(trusted=config.trusted, allow_unisolated=config.allow_unisolated)
    if refused:
        return {}, f"not compiled ahead: {refused}"
    taken = _take_spare(target)
    folder = (
        taken.folder if taken else Path(tempfile.mkdtemp(prefix="kf-warm-", dir=default_root()))
    )
    try:
        (folder / "inputs").mkdir(exist_ok=True)
        staged = integrity.stage(task, folder)
        paths = []
        for i, source in enumerate(sources):
            path = folder / ("candidate.py" if len(sources) == 1 else f"candidate_{i}.py")
            path.write_text(source, encoding="utf-8")
            paths.append(str(path))
        shapes = [
            dict(s.dims)
            for s in task.shapes_for("cuda")
            if config.shapes is None or s.name in config.shapes
        ]
        spec = {
            "task_path": str(staged),
            "task_id": task.id,
            "candidate_paths": paths,
            "shapes": shapes,
            "arch": target[0] * 10 + target[1],
            "warp_size": 32,
        }
        (folder / "warm.json").write_text(json.dumps(spec), encoding="utf-8")
        proc = _go(taken) if taken else None
        if proc is None:  # no spare, or one that died before its job: a process started now
            proc = _launch(folder, [])
        late = ""
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if not keep_partial:
                return {}, f"not compiled ahead: ran past {timeout_s:.0f} s"
            late = f"stopped after {timeout_s:.0f} s; "
        files, why = _collect(folder / ".triton" / "cache")
        outcomes = _outcomes(folder)
        return files, why or f"compiled ahead: {late}{len(files)} cache file(s); calls: {outcomes}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if _SPARES["target"] is not None:
            _start_spare()  # for this worker's next job, set up while it is idle


def _launch(folder: Path, extra: list[str], *, stdin: Any = subprocess.DEVNULL) -> subprocess.Popen:
    """`benchmarks.executor.warm_compile FOLDER [extra]` in a CPU worker's sandbox (no GPU
    device node, and no GPU named to torch either), its output in `FOLDER/warm.log`, the Triton
    cache it fills in `FOLDER/.triton/cache` (the bound folder, not the sandbox's private tmpfs,
    so the host reads it)."""
    from benchmarks.harness import sandbox

    program = [sys.executable, "-m", "benchmarks.executor.warm_compile", str(folder), *extra]
    launch = sandbox.candidate_launch(folder, "cpu", program)
    cache = folder / ".triton" / "cache"
    env = {**launch.env, "CUDA_VISIBLE_DEVICES": "", "TRITON_CACHE_DIR": str(cache)}
    with open(folder / "warm.log", "wb") as log:
        return subprocess.Popen(
            launch.argv,
            cwd=folder,
            env=env,
            stdin=stdin,
            stdout=log,
            stderr=log,
            start_new_session=True,
            preexec_fn=launch.preexec_fn,  # noqa: PLW1509 - setrlimit calls only
        )


# --------------------------------------------------------------------------------------------
# spares: a compile worker's next sandboxed compile process, started while the worker is idle
# --------------------------------------------------------------------------------------------
#
# A compile process spends ~4 s importing PyTorch and Triton and ~4 s more on its first compile
# (loading the compiler) before it compiles anything of the candidate's (H200 machine,
# 2026-12-04: `docs/results/throughput_h200_2026-12-04b.md`). A worker that has spares on keeps
# one such process started and warmed up (`warm_compile.spare`) for its next job. A spare is
# used for ONE job and then discarded, and no candidate code runs in it before that job, so it
# never carries anything from one candidate to another. On by the local executor on a GPU
# machine (`enable_spares` in each compile worker); nothing else starts one.


@dataclass
class _Spare:
    proc: subprocess.Popen
    folder: Path
    target: tuple[int, int]


_SPARES: dict[str, Any] = {"target": None, "spare": None, "finalizer": None}


def enable_spares(target: tuple[int, int] | None) -> None:
    """Keep a spare compile process for `target` in this process from now on (None: never)."""
    if target is None:
        return
    _SPARES["target"] = target
    if _SPARES["finalizer"] is None:
        from multiprocessing import util

        # a compile worker ends through multiprocessing, which runs its finalizers, not atexit
        _SPARES["finalizer"] = util.Finalize(None, drop_spare, exitpriority=10)
    _start_spare()


def _start_spare() -> None:
    from benchmarks.harness.child import default_root

    target = _SPARES["target"]
    if target is None or _SPARES["spare"] is not None:
        return
    folder = Path(tempfile.mkdtemp(prefix="kf-warm-", dir=default_root()))
    try:
        proc = _launch(
            folder, ["--spare", str(target[0] * 10 + target[1]), "32"], stdin=subprocess.PIPE
        )
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return
    _SPARES["spare"] = _Spare(proc, folder, target)


def _take_spare(target: tuple[int, int]) -> _Spare | None:
    """This worker's spare for `target`, now the caller's; None when there is none alive."""
    spare = _SPARES["spare"]
    _SPARES["spare"] = None
    if spare is None:
        return None
    if spare.target != target or spare.proc.poll() is not None:
        _end(spare)
        return None
    return spare


def _go(spare: _Spare) -> subprocess.Popen | None:
    """Tell `spare` its job is written; None when it can no longer take it (it died)."""
    try:
        assert spare.proc.stdin is not None
        spare.proc.stdin.write(b"go\n")
        spare.proc.stdin.close()
    except (OSError, ValueError):
        _end(spare, keep_folder=True)
        return None
    return spare.proc


def _end(spare: _Spare, *, keep_folder: bool = False) -> None:
    """Stop `spare`'s process (its whole session) and, unless `keep_folder`, remove its folder."""
    with contextlib.suppress(OSError, ValueError):
        if spare.proc.stdin is not None:
            spare.proc.stdin.close()  # end of input: a waiting spare exits by itself
    if spare.proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(spare.proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        spare.proc.wait(timeout=10)
    if not keep_folder:
        shutil.rmtree(spare.folder, ignore_errors=True)


def drop_spare() -> None:
    """End this process's spare and start no other."""
    _SPARES["target"] = None
    spare, _SPARES["spare"] = _SPARES["spare"], None
    if spare is not None:
        _end(spare)


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


# --------------------------------------------------------------------------------------------
# a sweep's CPU stage: every configuration compiled ahead, its worker seeded with the union
# --------------------------------------------------------------------------------------------


def sweep_chunks(count: int, workers: int) -> list[list[int]]:
    """The indices 0..count-1 dealt round-robin into at most `workers` non-empty chunks, one
    sandboxed compile process each."""
    n = max(1, min(workers, count))
    return [list(range(k, count, n)) for k in range(n) if k < count]


def precompile_sweep(
    request: SweepRequest, target: tuple[int, int] | None, indices: list[int]
) -> Precompiled:
    """The CPU stage of a sweep for the sources at `indices`: their kernels compiled for
    `target` in ONE sandboxed CPU process. Sources the static check rejects are not run here
    (the sweep drops them itself, with the message)."""
    from benchmarks.harness.static_check import check_task_candidate

    t0 = time.perf_counter()
    if target is None:
        return Precompiled(True, compile_note="not compiled ahead: no GPU target")
    task = load_request_task(request.base)
    sources = [
        request.sources[i]
        for i in indices
        if check_task_candidate(request.sources[i], task, filename=f"cfg_{i}.py").ok
    ]
    if not sources:
        return Precompiled(True, compile_note="not compiled ahead: the static check failed")
    files, note = compile_sources(
        sources, request.base.config, task, target, WARM_TIMEOUT_S, keep_partial=True
    )
    return Precompiled(True, "", time.perf_counter() - t0, files, note)


def precompile_remeasure(request: RemeasureRequest, target: tuple[int, int] | None) -> Precompiled:
    """The CPU stage of a re-measurement: the incumbent's and the candidate's kernels compiled
    for `target` in ONE sandboxed CPU process (both run in the one re-measuring worker anyway),
    so that worker times instead of compiling. Sources the static check rejects are left out."""
    from benchmarks.harness.static_check import check_task_candidate

    t0 = time.perf_counter()
    if target is None:
        return Precompiled(True, compile_note="not compiled ahead: no GPU target")
    cand = request.candidate
    task = load_request_task(cand)
    sources = [
        text
        for name, text in (
            ("incumbent.py", request.incumbent_source),
            ("candidate.py", cand.source),
        )
        if check_task_candidate(text, task, filename=name).ok
    ]
    if not sources:
        return Precompiled(True, compile_note="not compiled ahead: the static check failed")
    files, note = compile_sources(
        sources, cand.config, task, target, WARM_TIMEOUT_S, keep_partial=True
    )
    return Precompiled(True, "", time.perf_counter() - t0, files, note)


def merged(parts: list[Precompiled]) -> Precompiled:
    """The chunks of a sweep's CPU stage as one: the union of their Triton caches. One worker
    then holds every configuration's kernels: the configurations are variants of ONE kernel
    (the same source but for its tunables), so no candidate's cache reaches another's."""
    files: dict[str, bytes] = {}
    for part in parts:
        files.update(part.triton_files)
    notes = "; ".join(f"chunk {k}: {p.compile_note}" for k, p in enumerate(parts))
    seconds = max((p.seconds for p in parts), default=0.0)
    return Precompiled(True, "", seconds, files, f"{len(parts)} compile process(es): {notes}")


def seeded(request: Any, seed: Path | None, staged: Precompiled | None) -> Any:
    """`request` told where the Triton cache its CPU stage compiled lies (`seed`, from
    `seed_folder`), and, for a sweep, what that stage did."""
    import dataclasses

    if isinstance(request, SweepRequest):
        note = staged.compile_note if staged is not None else ""
        base = request.base
        if seed is not None:
            config = dataclasses.replace(base.config, triton_cache_seed=str(seed))
            base = dataclasses.replace(base, config=config)
        return dataclasses.replace(request, base=base, compile_note=note)
    if seed is not None and isinstance(request, RemeasureRequest):
        cand = request.candidate
        config = dataclasses.replace(cand.config, triton_cache_seed=str(seed))
        return dataclasses.replace(request, candidate=dataclasses.replace(cand, config=config))
    if seed is not None and isinstance(request, EvalRequest):
        config = dataclasses.replace(request.config, triton_cache_seed=str(seed))
        return dataclasses.replace(request, config=config)
    return request


# --------------------------------------------------------------------------------------------
# compiled caches kept for a source judged again (a re-evaluation, an incumbent re-measured)
# --------------------------------------------------------------------------------------------

MEMO_BYTES = 512 << 20  # the most cache bytes the executor keeps for sources judged again


def compile_key(request: EvalRequest, target: tuple[int, int], source: str | None = None) -> str:
    """What a compile-ahead of `source` (default: the request's) depends on: the source, the task
    file's contents and id, the shapes judged and the GPU's architecture."""
    shapes = request.config.shapes
    parts = [
        source if source is not None else request.source,
        request.task_id,
        request.task_sha256,
        json.dumps(sorted(shapes) if shapes is not None else None),
        f"{target[0]}.{target[1]}",
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def sweep_key(request: SweepRequest, target: tuple[int, int]) -> str:
    """What a sweep's CPU stage depends on: every configuration's source (with the task, shapes
    and GPU, as `compile_key`) in order; not the inputs' seed, which compiling never reads."""
    parts = [compile_key(request.base, target, source) for source in request.sources]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


class CompiledMemo:
    """The Triton caches compiled ahead for sources judged before, by `compile_key`, up to
    `limit` bytes (the least recently used dropped first). A cache is only ever handed to the same
    source on the same task, shapes and GPU: what one candidate compiled never reaches another."""

    def __init__(self, limit: int = MEMO_BYTES) -> None:
        self.limit = limit
        self._items: OrderedDict[str, dict[str, bytes]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, bytes] | None:
        with self._lock:
            files = self._items.get(key)
            if files is not None:
                self._items.move_to_end(key)
            return files

    def put(self, key: str, files: dict[str, bytes]) -> None:
        size = sum(len(b) for b in files.values())
        if not files or size > self.limit:
            return
        with self._lock:
            if key in self._items:
                return
            self._items[key] = files
            self._bytes += size
            while self._bytes > self.limit:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= sum(len(b) for b in dropped.values())

    def reused(self, keys: list[str]) -> Precompiled | None:
        """One stage's result made of the caches of every key in `keys`, or None when one is
        missing."""
        found = [self.get(k) for k in keys]
        if any(f is None for f in found):
            return None
        files: dict[str, bytes] = {}
        for part in found:
            files.update(part or {})
        return Precompiled(
            True,
            "",
            0.0,
            files,
            "compiled ahead before (the same source, task, shapes and GPU): its cache reused",
        )
