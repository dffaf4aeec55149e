"""A worker process (`benchmarks.harness.worker`) in its own process group, and its progress lines.

Used by the judge for untrusted candidates and by the perf stage for trusted baselines. What
travels between the two is defined in `benchmarks.harness.messages`."""

from __future__ import annotations

import atexit
import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TypeVar

from benchmarks.harness.messages import (
    CallEvent,
    Event,
    ImportEvent,
    Job,
    MalformedEvent,
    MessageError,
    PerfEvent,
    Result,
    dump,
    parse_event,
    parse_result,
    result_type,
)

R = TypeVar("R")

REPO_ROOT = Path(__file__).resolve().parents[2]


class Child:
    """A worker process in its own process group, with its progress lines.

    The process starts in "serve" mode: it imports torch and triton (and initialises CUDA) at
    once, then waits for `submit` to hand it a request. The pool below starts the next one while
    the current evaluation runs, which hides the start-up from a bench or an agent. A child
    runs one request and exits: no candidate ever shares a process with another."""

    def __init__(self, folder: Path, device: str) -> None:
        self.folder = folder
        self.device = device
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        )
        env["PYTHONUNBUFFERED"] = "1"
        if device == "cpu":
            env["TRITON_INTERPRET"] = "1"
        else:
            env.pop("TRITON_INTERPRET", None)
        self._out = open(folder / "stdout.txt", "wb")  # noqa: SIM115
        self._err = open(folder / "stderr.txt", "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "benchmarks.harness.worker",
                "--serve",
                str(folder),
                device,
                str(os.getpid()),
            ],
            cwd=folder,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=self._err,
            start_new_session=True,
        )
        self._pos = 0
        self.events: list[Event] = []

    def submit(self, job: Job) -> None:
        """Hand the waiting process its one job (written atomically)."""
        tmp = self.folder / "request.json.tmp"
        tmp.write_text(dump(job))
        tmp.replace(self.folder / "request.json")

    def poll_events(self) -> list[Event]:
        """The progress lines written since the last poll, parsed; a line that is not a valid
        event comes back as a `MalformedEvent` saying why (the caller decides what it means)."""
        path = self.folder / "progress.jsonl"
        if not path.exists():
            return []
        with open(path, "rb") as f:
            f.seek(self._pos)
            chunk = f.read()
        end = chunk.rfind(b"\n")
        if end < 0:
            return []
        self._pos += end + 1
        new: list[Event] = []
        for line in chunk[: end + 1].splitlines():
            try:
                new.append(parse_event(line))
            except MessageError as exc:
                raw = line[:200].decode(errors="replace")
                new.append(MalformedEvent(raw=raw, error=str(exc)[:500]))
        self.events.extend(new)
        return new

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        self._close()

    def wait(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def _close(self) -> None:
        for f in (self._out, self._err):
            if not f.closed:
                f.close()

    def result(self, cls: type[R]) -> R | None:
        """The result the worker wrote, as record `cls`; None when there is none. Raises
        `MessageError` when result.json is not a valid `cls`."""
        path = self.folder / "result.json"
        try:
            text = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise MessageError(f"result.json cannot be read: {exc}") from None
        return parse_result(cls, text)

    def stderr_tail(self, n: int = 1500) -> str:
        self._close()
        try:
            return (self.folder / "stderr.txt").read_bytes()[-n:].decode(errors="replace")
        except OSError:
            return ""

    def last_step(self) -> str:
        """Where the worker was, from its latest call, perf or import line (for messages)."""
        for evt in reversed(self.events):
            if isinstance(evt, CallEvent):
                return f"during the call on shape {evt.shape}, mode {evt.mode}, trial {evt.trial}"
            if isinstance(evt, PerfEvent):
                return f"while timing shape {evt.shape}"
            if isinstance(evt, ImportEvent):
                return "while importing the candidate"
        return "before the candidate was imported"


def signal_name(code: int) -> str:
    """'SIGSEGV' for a return code of -11."""
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


# --------------------------------------------------------------------------------------------
# A pool of spare children per (device, folder root), started ahead of need
# --------------------------------------------------------------------------------------------

_SPARES: dict[tuple[str, str], list[Child]] = {}
# How many spares to keep starting. A worker needs ~8 s to import torch and triton, start CUDA and
# warm up (H200); a warm GPU evaluation takes ~5 s, so with one spare, evaluations run back to
# back wait for it (13 s instead of 5: H200, torch 2.11, triton 3.6, 2026-11-29,
# docs/results/harness_speed_cuda_2026-11-29c.md). Two overlap their start-ups: 3.9-5.6 s back to
# back, median 4.2 s (same machine and versions, docs/results/harness_speed_cuda.md). On the CPU one is
# enough (the interpreter's evaluations are longer) and each spare competes for few cores.
SPARES_PER_DEVICE = {"cuda": 2, "cpu": 1}


def default_root() -> Path:
    """Where workers' folders go unless a caller names a root: /dev/shm (memory) where it can be
    written, else the temporary directory. The judge and `run_job` share it, so a trusted job
    (baselines, re-measurement) takes a spare the judge started instead of starting one cold
    (~8 s on the H200)."""
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())


def _spawn(device: str, root: Path) -> Child:
    return Child(Path(tempfile.mkdtemp(prefix="kf-judge-", dir=root)), device)


def acquire(device: str, root: Path, prewarm: bool = True) -> Child:
    """A fresh, waiting child for `device` whose folder sits under `root`: the oldest spare
    still alive, else a new one. With `prewarm`, spares are started now, in the background, up
    to SPARES_PER_DEVICE, for the following calls."""
    key = (device, str(root))
    spares = _SPARES.setdefault(key, [])
    child = None
    while spares and child is None:
        candidate = spares.pop(0)
        if candidate.proc.poll() is None:
            child = candidate
        else:
            discard(candidate)
    if child is None:
        child = _spawn(device, root)
    if prewarm:
        while len(spares) < SPARES_PER_DEVICE.get(device, 1):
            spares.append(_spawn(device, root))
    return child


def discard(child: Child) -> None:
    """Kill a child (if still running) and remove its folder."""
    child.kill()
    shutil.rmtree(child.folder, ignore_errors=True)


def run_job(
    device: str,
    job: Job,
    *,
    timeout_s: float,
    root: Path | None = None,
    files: dict[str, str] | None = None,
) -> Result:
    """Run one trusted or measurement job to completion in a fresh child; its result, an error
    result when it timed out, died or wrote a malformed result. `files` are written into the
    child's folder first (name -> text); "{folder}" in the job's strings is replaced by its path."""
    child = acquire(device, root or default_root(), prewarm=False)
    cls = result_type(job)
    try:
        for name, text in (files or {}).items():
            (child.folder / name).write_text(text)
        job = _in_folder(job, child.folder)
        child.submit(job)
        failed = cls()
        if child.wait(timeout_s) is None:
            failed.fail("", f"{job.kind} job ran past {timeout_s:.0f} s and was killed")
            return failed
        try:
            result = child.result(cls)
        except MessageError as exc:
            failed.fail("harness_error", f"{job.kind} worker wrote a malformed result: {exc}")
            return failed
        if result is None:
            failed.fail("", f"{job.kind} worker died: {child.stderr_tail(600)}")
            return failed
        return result
    finally:
        discard(child)


def _in_folder(job: Job, folder: Path) -> Job:
    """`job` with "{folder}" in its string fields replaced by `folder`."""
    changes = {
        f.name: value.replace("{folder}", str(folder))
        for f in dataclasses.fields(job)
        if isinstance(value := getattr(job, f.name), str)
    }
    return dataclasses.replace(job, **changes)


@atexit.register
def drain_spares() -> None:
    """End every spare worker (at exit; a spawned process, which skips atexit, calls it)."""
    while _SPARES:
        _, spares = _SPARES.popitem()
        for child in spares:
            discard(child)
