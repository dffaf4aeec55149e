"""A worker process (`benchmarks.harness.worker`) in its own process group, and its progress lines.

Used by the judge for untrusted candidates (isolated: `benchmarks.harness.sandbox`) and by the perf
stage for trusted baselines (the task's own reference: run as this process's user). What travels
between the two is defined in `benchmarks.harness.messages`."""

from __future__ import annotations

import atexit
import dataclasses
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from benchmarks.harness import forkserver, leftovers, observer, procfs, sandbox
from benchmarks.harness.messages import (
    OPS_FD_ENV,
    CallEvent,
    Event,
    ImportEvent,
    InputsMessage,
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
from benchmarks.harness.watchdog import Watchdog, WatchLimits, watch_limits
from benchmarks.redaction import without_secrets

R = TypeVar("R")

REPO_ROOT = Path(__file__).resolve().parents[2]


class OpStream:
    """The judge's end of a worker's op pipe, drained by a thread of its own: every compute op
    name the worker's recorder wrote (counted; "launch:" before a name dispatched inside a
    Triton launch), and whether the pipe closed (`closed`: the worker exited, or something in it
    closed its end)."""

    def __init__(self, fd: int) -> None:
        self.ops: Counter[str] = Counter()
        self.closed = threading.Event()
        self._lock = threading.Lock()
        self._fd = fd
        threading.Thread(target=self._drain, daemon=True, name="kf-op-stream").start()

    def _drain(self) -> None:
        rest = b""
        try:
            while True:
                chunk = os.read(self._fd, 65536)
                if not chunk:
                    break
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()[-200:]
                with self._lock:
                    for line in lines:
                        if len(self.ops) < 1024 or line.decode(errors="replace") in self.ops:
                            self.ops[line.decode(errors="replace")[:120]] += 1
        except OSError:
            pass
        finally:
            self.closed.set()
            try:
                os.close(self._fd)
            except OSError:
                pass

    def seen(self) -> Counter[str]:
        """The op names written so far."""
        with self._lock:
            return Counter(self.ops)


class Child:
    """A worker process in its own process group, with its progress lines.

    The process starts in "serve" mode: it imports torch and triton (and initialises CUDA) at
    once, then waits for `submit` to hand it a request. The pool below starts the next one while
    the current evaluation runs, which hides the start-up from a bench or an agent. A child
    runs one request and exits: no candidate ever shares a process with another."""

    # the sandbox's init pipe and pid (bwrap only); class defaults keep a Child built without
    # a process (the judge's protocol tests script one) consistent
    _info: int | None = None
    _init_pid: int | None = None
    _init_started: str | None = None
    isolation: str = "none"
    observer: observer.ObserverStream | None = None  # set where launches are observed

    _server: forkserver.ForkServer | None = None  # set for a worker forked from a fork server
    _given_back = False

    def __init__(
        self,
        folder: Path,
        device: str,
        *,
        isolate: bool,
        server: forkserver.ForkServer | None = None,
    ) -> None:
        """`isolate`: the worker will run untrusted code (a candidate), so it starts in the
        isolation this machine offers (`self.isolation`: "bwrap" or "none"; scrubbed environment
        and rlimits either way). A trusted worker (baselines) runs as this process, unisolated.
        `server`: fork the worker from this warm, sandboxed fork server (`folder` inside its
        folder) instead of starting a process (benchmarks/harness/forkserver.py)."""
        self.folder = folder
        self.device = device
        self.oom_kills_at_submit: int | None = (
            None  # the kernel's OOM-kill count when the job went in
        )
        if server is not None:
            self._forked(server)
            return
        worker = [sys.executable, "-m", "benchmarks.harness.worker", "--serve", str(folder), device]
        preexec = None
        if isolate:
            launch = sandbox.candidate_launch(folder, device, worker)
            # in its own pid namespace the worker's parent is bubblewrap's init, never the judge;
            # the sandbox dies with the judge (--die-with-parent) instead
            argv = launch.argv if launch.isolation == sandbox.BWRAP else [*worker, str(os.getpid())]
            env, preexec, self.isolation = launch.env, launch.preexec_fn, launch.isolation
        else:
            argv, self.isolation = [*worker, str(os.getpid())], "trusted (unisolated)"
            env = without_secrets()  # trusted code needs no keys or tokens either
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
        # under bwrap, the sandbox's init reports its host pid on a pipe, so that `kill` can wait
        # for the whole pid namespace (the candidate's every process) to be gone
        self._info, pass_fds = None, ()
        if self.isolation == sandbox.BWRAP:
            self._info, info_w = os.pipe()
            argv = [argv[0], "--info-fd", str(info_w), *argv[1:]]
            pass_fds = (info_w,)
        # the compute ops the candidate's calls dispatch, written as they happen (fallback.py)
        ops_r, ops_w = os.pipe()
        env = {**env, OPS_FD_ENV: str(ops_w)}
        pass_fds = (*pass_fds, ops_w)
        self.ops = OpStream(ops_r)
        # the launches of an untrusted worker on a GPU, counted from outside its Python by a
        # CUPTI library the driver loads into it (benchmarks/harness/observer)
        lib = observer.library() if isolate and device == "cuda" else None
        if lib is not None:
            env, observer_fds, self.observer = observer.arm(env, lib)
            pass_fds = (*pass_fds, *observer_fds)
        self._init_pid: int | None = None
        self._init_started: str | None = None
        self.proc = _SPAWNER.run(
            lambda: subprocess.Popen(
                argv,
                cwd=folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=self._out,
                stderr=self._err,
                start_new_session=True,
                pass_fds=pass_fds,
                preexec_fn=preexec,  # noqa: PLW1509 - only setrlimit calls, between fork and exec
            )
        )
        for fd in pass_fds:
            os.close(fd)
        self._pos = 0
        self.events: list[Event] = []

    def _forked(self, server: forkserver.ForkServer) -> None:
        (self.folder / "tmp").mkdir(exist_ok=True)
        (self.folder / "inputs").mkdir(exist_ok=True)
        self.isolation = sandbox.BWRAP
        self._out = open(self.folder / "stdout.txt", "wb")  # noqa: SIM115
        self._err = open(self.folder / "stderr.txt", "wb")  # noqa: SIM115
        self._info = None
        self._init_pid = None
        self._init_started = None
        ops_r, ops_w = os.pipe()
        self.ops = OpStream(ops_r)
        try:
            self.proc = server.fork(self.folder, ops_w)  # type: ignore[assignment]
        finally:
            os.close(ops_w)
        self._server = server
        self._pos = 0
        self.events = []

    def stage(self, path: str | Path) -> str:
        """A path to `path` this worker can read (a copy in its read-only inputs folder where its
        sandbox hides the original, e.g. a task file under /tmp or a home folder)."""
        if self.isolation != sandbox.BWRAP:
            return str(path)
        return str(sandbox.stage_file(Path(path), self.folder))

    def submit(self, job: Job) -> None:
        """Hand the waiting process its one job (written atomically)."""
        self._read_init()
        self.oom_kills_at_submit = procfs.oom_kills()
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
        """End the worker and, when sandboxed, its pid namespace: on return nothing the
        candidate started is left running."""
        self._read_init()
        if self._server is not None:  # pid 1 of its pid namespace: the namespace dies with it
            if self._init_pid is not None and self._init_started is not None:
                # killed only if it is still the process that started then (not a reused pid)
                sandbox.end_namespace(self._init_pid, self._init_started)
        else:
            # the group too when the worker has exited: an unisolated candidate's forks stay in
            # it (its number cannot be reused while a member lives)
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.proc.wait()
        if self._init_pid is not None and self._init_started is not None:
            sandbox.end_namespace(self._init_pid, self._init_started)
        self._close()
        if self._server is not None and not self._given_back:
            self._given_back = True  # the server takes the next evaluation (or is retired)
            forkserver.give_back(self._server, self.proc.job)  # type: ignore[attr-defined]

    def watchdog(self, limits: WatchLimits | None = None) -> Watchdog:
        """A watch over this worker's processes and folder (`benchmarks.harness.watchdog`):
        under bwrap its whole pid namespace and the sandbox's tmpfs, unisolated its process
        family. `limits` default to the device's."""
        self._read_init()
        limits = limits or watch_limits(self.device)
        if self.isolation == sandbox.BWRAP and self._init_pid is not None:
            return Watchdog(
                self._init_pid,
                self.folder,
                limits,
                sandboxed=True,
                nested=self._server is not None,
                mounts=sandbox.scratch_mounts(self.folder),
                tmpfs_size=sandbox.limits_for(self.device).tmpfs_size,
            )
        if self._server is not None:  # the forked worker is gone already: nothing to watch
            return Watchdog(-1, self.folder, limits, sandboxed=False)
        return Watchdog(self.proc.pid, self.folder, limits, sandboxed=False)

    def returncode(self) -> int | None:
        """The worker's exit status, negative for a signal as subprocess reports it. Under bwrap
        the sandbox's init passes a worker killed by signal N on as exit code 128 + N."""
        code = self.proc.returncode
        if self.isolation == sandbox.BWRAP and code is not None and 128 < code < 128 + 65:
            return -(code - 128)
        return code

    def wait(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def _read_init(self) -> None:
        if self._server is not None and self._init_pid is None:
            alive = self.proc.poll() is None
            pid = self.proc.pid if alive else 0
            seen = procfs.process_start(pid) if pid else None
            if seen is not None:
                self._init_pid, self._init_started = pid, seen[1]
            return
        if self._info is not None and self._init_pid is None:
            alive = self.proc.poll() is None
            self._init_pid = sandbox.read_init_pid(self._info, timeout_s=2 if alive else 0)
            seen = procfs.process_start(self._init_pid) if self._init_pid else None
            self._init_started = seen[1] if seen else None

    def _close(self) -> None:
        for f in (self._out, self._err):
            if not f.closed:
                f.close()
        if self._info is not None:
            self._read_init()
            os.close(self._info)
            self._info = None

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


def send_inputs(folder: Path, seed: int) -> None:
    """inputs.json, the candidate job's input seed, for the worker in `folder` (written
    atomically). The judge sends it once the worker says the candidate is imported."""
    tmp = folder / "inputs.json.tmp"
    tmp.write_text(dump(InputsMessage(seed=seed)))
    tmp.replace(folder / "inputs.json")


def signal_name(code: int) -> str:
    """'SIGSEGV' for a return code of -11."""
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


class _Spawner:
    """Starts every worker process from one thread that lives as long as this process.

    bubblewrap's `--die-with-parent` is `PR_SET_PDEATHSIG`, which fires when the *thread* that
    forked it exits, not its process: a spare started from an agent's generator thread was
    killed (SIGKILL) as soon as that thread ended, and an evaluation could lose its worker the
    same way (tests/test_process_lifetime.py). Forking from this thread ties the sandbox's life
    to the judge's process instead. Re-made in a forked child, where the thread does not exist."""

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.Queue[tuple[Callable[[], object], list[object], threading.Event]] = (
            queue.Queue()
        )
        self._thread: threading.Thread | None = None
        self._pid = 0

    def run(self, fn: Callable[[], R]) -> R:
        """`fn()` called on the spawner thread; its result, or its exception raised here."""
        with self._lock:
            if self._thread is None or self._pid != os.getpid():
                self._jobs = queue.Queue()
                self._thread = threading.Thread(target=self._serve, name="kf-spawner", daemon=True)
                self._thread.start()
                self._pid = os.getpid()
        if threading.current_thread() is self._thread:
            return fn()
        box: list[object] = []
        done = threading.Event()
        self._jobs.put((fn, box, done))
        done.wait()
        kind, value = box
        if kind == "error":
            raise value  # type: ignore[misc]
        return value  # type: ignore[return-value]

    def _serve(self) -> None:
        jobs = self._jobs
        while True:
            fn, box, done = jobs.get()
            try:
                box[:] = ["ok", fn()]
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller
                box[:] = ["error", exc]
            done.set()


_SPAWNER = _Spawner()


# --------------------------------------------------------------------------------------------
# A pool of spare children per (device, folder root), started ahead of need
# --------------------------------------------------------------------------------------------

_SPARES: dict[tuple[str, str, bool], list[Child]] = {}
# How many spares to keep starting. A worker's start-up (torch, triton, CUDA, warm-up) takes longer
# than a warm GPU evaluation, so with one spare, evaluations run back to back wait for it; two
# overlap their start-ups (docs/results/design_measurements.md, "Spare workers"). On the CPU one is
# enough (the interpreter's evaluations are longer) and each spare competes for few cores.
SPARES_PER_DEVICE = {"cuda": 2, "cpu": 1}


def default_root() -> Path:
    """Where workers' folders go unless a caller names a root: /dev/shm (memory) where it can be
    written, else the temporary directory. The judge and `run_job` share it, so a trusted job
    (baselines, re-measurement) takes a spare the judge started instead of starting one cold."""
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())


_SWEPT: set[str] = set()
_POOL_LOCK = threading.Lock()


def _spawn(device: str, root: Path, isolate: bool) -> Child:
    folder = Path(tempfile.mkdtemp(prefix=leftovers.owner_prefix(), dir=root))
    return Child(folder, device, isolate=isolate)


_FORK_FAILED: set[str] = set()  # devices whose fork server could not start here (said once)


def _forked(device: str, root: Path, prewarm: bool) -> Child | None:
    """An isolated worker forked from a warm fork server, or None where none can serve."""
    if device in _FORK_FAILED or not forkserver.enabled(device):
        return None
    server = forkserver.take(device, root, _SPAWNER.run, prewarm)
    folder = Path(tempfile.mkdtemp(prefix="e-", dir=server.folder))
    try:
        return Child(folder, device, isolate=True, server=server)
    except forkserver.ServerGone as exc:
        shutil.rmtree(folder, ignore_errors=True)
        forkserver.end_now(server)
        if exc.never_ready:  # it cannot work here: said once, then fresh workers only
            _FORK_FAILED.add(device)
            print(f"kernforge: no fork server ({exc}); fresh workers instead", file=sys.stderr)
        return None


def _sweep_once(root: Path) -> None:
    """On the first use of `root` in this process, remove the worker folders of dead judges."""
    key = str(root.resolve())
    with _POOL_LOCK:
        if key in _SWEPT:
            return
        _SWEPT.add(key)
    leftovers.sweep(root)


def acquire(
    device: str, root: Path, prewarm: bool = True, *, isolate: bool, fork: bool = True
) -> Child:
    """A fresh, waiting child for `device` whose folder sits under `root`: the oldest spare
    still alive, else a new one. With `prewarm`, spares are started now, in the background, up
    to SPARES_PER_DEVICE, for the following calls. `isolate`: for untrusted code (see Child);
    isolated and trusted workers are pooled apart. An isolated worker is forked from a warm fork
    server where one can serve (`forkserver.enabled`) unless `fork` is False."""
    _sweep_once(root)
    if isolate and fork:
        forked = _forked(device, root, prewarm)
        if forked is not None:
            return forked
    key = (device, str(root), isolate)
    child = None
    while child is None:
        with _POOL_LOCK:
            spares = _SPARES.setdefault(key, [])
            if not spares:
                break
            candidate = spares.pop(0)
        if candidate.proc.poll() is None:
            child = candidate
        else:
            discard(candidate)
    if child is None:
        child = _spawn(device, root, isolate)
    if prewarm:
        while True:
            with _POOL_LOCK:
                spares = _SPARES.setdefault(key, [])
                if len(spares) >= SPARES_PER_DEVICE.get(device, 1):
                    break
            spare = _spawn(device, root, isolate)
            with _POOL_LOCK:
                _SPARES.setdefault(key, []).append(spare)
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
    isolate: bool | None = None,
    triton_cache_seed: str = "",
) -> Result:
    """Run one trusted or measurement job to completion in a fresh child; its result, an error
    result when it timed out, died or wrote a malformed result. `files` are written into the
    child's folder first (name -> text); "{folder}" in the job's strings (and lists of strings)
    is replaced by its path. `isolate` (default: by job) runs it sandboxed: every job but
    "baseline" (the task's own reference, trusted) imports candidate code. `triton_cache_seed`:
    a folder of Triton cache files compiled ahead for this job's kernels, copied where the
    worker takes them into its own cache (as the judge seeds a candidate's)."""
    if isolate is None:
        isolate = job.kind != "baseline"
    child = acquire(device, root or default_root(), prewarm=False, isolate=isolate)
    cls = result_type(job)
    try:
        job = dataclasses.replace(job, task_path=child.stage(job.task_path))
        if triton_cache_seed and Path(triton_cache_seed).is_dir():
            shutil.copytree(
                triton_cache_seed, child.folder / ".triton" / "cache", dirs_exist_ok=True
            )
        for name, text in (files or {}).items():
            (child.folder / name).write_text(text)
        job = _in_folder(job, child.folder)
        child.submit(job)
        failed = cls()
        over = _wait_watched(child, timeout_s, isolate)
        if over is not None:
            failed.fail("", f"{job.kind} job {over} and was killed")
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


def _wait_watched(child: Child, timeout_s: float, watched: bool) -> str | None:
    """Wait for `child` to exit, watching its resources when `watched` (it runs candidate
    code); why it was stopped ("ran past ...", what it exceeded), or None when it exited."""
    deadline = time.perf_counter() + timeout_s
    watch = child.watchdog() if watched else None
    while child.proc.poll() is None:
        now = time.perf_counter()
        if now > deadline:
            return f"ran past {timeout_s:.0f} s"
        if watch is not None and watch.due(now):
            over = watch.check()
            if over is not None:
                return f"exceeded a resource limit: {over.message}"
        child.wait(0.02)
    return None


def _in_folder(job: Job, folder: Path) -> Job:
    """`job` with "{folder}" in its string fields, and in its lists of strings, replaced by
    `folder`."""
    where = str(folder)
    changes: dict[str, object] = {}
    for f in dataclasses.fields(job):
        value = getattr(job, f.name)
        if isinstance(value, str):
            changes[f.name] = value.replace("{folder}", where)
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            changes[f.name] = [v.replace("{folder}", where) for v in value]
    return dataclasses.replace(job, **changes)


@atexit.register
def drain_spares() -> None:
    """End every spare worker (at exit; a spawned process, which skips atexit, calls it)."""
    while _SPARES:
        with _POOL_LOCK:
            _, spares = _SPARES.popitem()
        for child in spares:
            discard(child)
    forkserver.shut_down()
