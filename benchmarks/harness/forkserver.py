"""Warm, isolated workers for the CPU judge: one sandboxed process with torch and Triton imported
forks a fresh worker per evaluation.

Why: a sandboxed worker's `import torch` and `import triton` cost ~3.5 s of CPU on a 2-core
machine, more than the Triton interpreter spends judging most candidates; with spare workers the
wait is hidden but the CPU is not (docs/judge.md, "Warm workers on the CPU").

How, and what keeps each evaluation as isolated as a fresh bubblewrap worker:

- The server is started like any candidate's worker (`sandbox.candidate_launch`: no network, its
  own pid namespace, read-only filesystem but its folder, scrubbed environment, rlimits), as pid 1
  of its sandbox (`--as-pid-1`, so no other process of ours shares that namespace). It imports,
  makes itself non-dumpable (no process of this user can trace it or read its memory) and then
  only reads fork requests from the judge's socket. It never imports or runs candidate code, and
  reads nothing from disk after its start-up.
- Per request it forks; that fork, also non-dumpable, enters new user, mount, pid and IPC
  namespaces (`benchmarks.harness.nest`) and forks the worker, pid 1 of the new pid namespace.
  The worker builds a fresh private view (new tmpfs on /dev/shm, /tmp and its folder's tmp/,
  every other folder of the server hidden, inputs/ read-only), drops every capability, points
  HOME, TMPDIR and Triton's cache at its own folder, and runs `worker.serve_one` exactly as a
  freshly started worker does. Candidate code runs only there.
- When the worker exits or the judge kills it (its host pid is found as the one grandchild of the
  server), the kernel kills every process the candidate started and drops its mounts and IPC
  objects with the namespaces. The server sees the fork exit and reports the worker's status.
- One evaluation at a time per server: the candidate cannot reach another evaluation's processes
  or files. A server is retired after `MAX_JOBS` evaluations, when it dies, or when it does not
  answer; the judge then starts another.

Used for isolated CPU workers under bubblewrap (the level "bwrap"); KERNFORGE_FORK_SERVER=0 turns
it off (fresh processes as before). GPU workers start fresh: CUDA cannot be initialised before a
fork, and their start-up is hidden behind spares and GPU work.

    python -m benchmarks.harness.forkserver <server folder> <device> <control fd>   (the server)
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.harness import leftovers, procfs, sandbox

ENV = "KERNFORGE_FORK_SERVER"
MAX_JOBS = 200  # evaluations per server before it is retired
START_TIMEOUT_S = 180.0  # the server's imports, on a loaded 2-core machine
_OPS_FD = 3  # where a forked worker keeps the op pipe's write end


def enabled(device: str) -> bool:
    """Whether isolated workers for `device` are forked from a server here."""
    return device == "cpu" and os.environ.get(ENV, "1") != "0" and sandbox.level() == sandbox.BWRAP


def describe() -> str:
    """One line for `kernforge doctor`: how isolated CPU workers start here."""
    if os.environ.get(ENV, "1") == "0":
        return f"a fresh sandboxed process per evaluation ({ENV}=0)"
    if sandbox.level() != sandbox.BWRAP:
        return "a fresh process per evaluation (no bubblewrap: no fork server)"
    return (
        "forked from a warm sandboxed fork server, new user/mount/pid/IPC namespaces per "
        f"evaluation (a fresh process instead where nested namespaces are refused; {ENV}=0 turns it off)"
    )


# --------------------------------------------------------------------------------------------
# the judge's side
# --------------------------------------------------------------------------------------------


class ServerGone(RuntimeError):
    """The server died, did not start, or stopped answering. `never_ready`: it never said it
    was ready (it cannot work on this machine, e.g. no nested user namespaces)."""

    def __init__(self, message: str, never_ready: bool = False) -> None:
        super().__init__(message)
        self.never_ready = never_ready


class ForkServer:
    """One sandboxed server process and the judge's end of its socket."""

    def __init__(self, device: str, root: Path, spawn: object) -> None:
        """`spawn(fn)` runs `fn` on the judge's spawner thread (see child._Spawner)."""
        self.device = device
        self.folder = Path(tempfile.mkdtemp(prefix=leftovers.owner_prefix(), dir=root))
        self.jobs = 0
        self.busy = False
        self.retired = False  # takes no more evaluations; ended at the next `take`
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        argv = [
            sys.executable,
            "-m",
            "benchmarks.harness.forkserver",
            str(self.folder),
            device,
            str(theirs.fileno()),
        ]
        launch = sandbox.candidate_launch(self.folder, device, argv)
        info_r, info_w = os.pipe()
        # root outside is uid 1 inside: a namespace nested in the sandbox may map only a
        # non-root parent id (the kernel wants CAP_SETFCAP for root, which bubblewrap dropped)
        ids = ["--uid", "1", "--gid", "1"] if os.getuid() == 0 or os.getgid() == 0 else []
        bwrap_argv = [
            launch.argv[0],
            "--as-pid-1",
            *ids,
            "--info-fd",
            str(info_w),
            *launch.argv[1:],
        ]
        self._log = open(self.folder / "server.log", "wb")  # noqa: SIM115
        self.proc = spawn(  # type: ignore[operator]
            lambda: subprocess.Popen(
                bwrap_argv,
                cwd=self.folder,
                env=launch.env,
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=self._log,
                start_new_session=True,
                pass_fds=(info_w, theirs.fileno()),
                preexec_fn=launch.preexec_fn,  # noqa: PLW1509 - only setrlimit calls
            )
        )
        os.close(info_w)
        theirs.close()
        self._info = info_r
        self.pid: int | None = None  # the server's host pid
        self._ready = False
        self._exits: dict[int, int] = {}
        self._lock = threading.Lock()

    # -- talking to it --------------------------------------------------------------------

    def _recv(self, timeout: float) -> dict | None:
        ready, _, _ = select.select([self._sock], [], [], max(0.0, timeout))
        if not ready:
            return None
        data = self._sock.recv(4096)
        if not data:
            raise ServerGone("the fork server closed its socket")
        try:
            msg = json.loads(data)
        except ValueError:
            raise ServerGone(f"the fork server wrote {data[:80]!r}") from None
        if not isinstance(msg, dict):
            raise ServerGone("the fork server wrote a non-object")
        return msg

    def _wait_ready(self, timeout: float) -> None:
        if self._ready:
            return
        if self.pid is None:
            self.pid = sandbox.read_init_pid(self._info, timeout_s=timeout)
            if self.pid is None:
                raise ServerGone(f"the fork server did not start: {self.log_tail()}", True)
        deadline = time.monotonic() + timeout
        while True:
            try:
                msg = self._recv(deadline - time.monotonic())
            except ServerGone as exc:
                raise ServerGone(f"{exc}: {self.log_tail()}", True) from None
            if msg is None:
                raise ServerGone(
                    f"the fork server was not ready in {timeout:.0f} s: {self.log_tail()}", True
                )
            if msg.get("ready") is True:
                self._ready = True
                return
            if msg.get("ready") is False:
                raise ServerGone(f"the fork server cannot fork here: {msg.get('why')}", True)

    def log_tail(self) -> str:
        try:
            return (self.folder / "server.log").read_bytes()[-400:].decode(errors="replace").strip()
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def fork(self, folder: Path, ops_w: int, timeout: float = START_TIMEOUT_S) -> ForkedWorker:
        """A worker forked for `folder` (inside this server's folder) with the op pipe `ops_w`."""
        with self._lock:
            self._wait_ready(timeout)
            self.jobs += 1
            job = self.jobs
            msg = json.dumps({"op": "fork", "job": job, "folder": str(folder)}).encode()
            try:
                socket.send_fds(self._sock, [msg], [ops_w])
            except OSError as exc:
                raise ServerGone(f"the fork server cannot be reached: {exc}") from None
            self.busy = True
        return ForkedWorker(self, job)

    def poll_exit(self, job: int, timeout: float) -> int | None:
        """The exit status of `job`'s worker when the server has reported it within `timeout`."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while job not in self._exits:
                try:
                    msg = self._recv(deadline - time.monotonic())
                except ServerGone:
                    self._exits[job] = -int(signal.SIGKILL)
                    break
                if msg is None:
                    if not self.alive():
                        self._exits[job] = -int(signal.SIGKILL)
                        break
                    return None
                if "exit" in msg and isinstance(msg.get("job"), int):
                    self._exits[msg["job"]] = int(msg["exit"])
            return self._exits[job]

    def grandchild(self, timeout: float) -> int | None:
        """The host pid of the worker the server forked last (the one grandchild of the server:
        the server forks only the intermediate process, which forks only the worker)."""
        deadline = time.monotonic() + timeout
        while self.pid is not None:
            table = [p for p in map(procfs.read, procfs.pids()) if p is not None]
            middle = [p.pid for p in table if p.ppid == self.pid]
            found = [p.pid for p in table if p.ppid in middle]
            if len(middle) == 1 and len(found) == 1:
                return found[0]
            if time.monotonic() > deadline:
                return None
            time.sleep(0.005)
        return None

    def close(self) -> None:
        """End the server and its sandbox, and remove its folder."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        if self.pid is not None:
            seen = procfs.process_start(self.pid)
            if seen is not None:
                sandbox.end_namespace(self.pid, seen[1])
        for closing in (self._sock.close, lambda: os.close(self._info), self._log.close):
            try:
                closing()
            except OSError:
                pass
        shutil.rmtree(self.folder, ignore_errors=True)


class ForkedWorker:
    """The judge's handle on one forked worker, shaped like the `subprocess.Popen` a fresh worker
    has (`pid`, `poll`, `wait`, `returncode`)."""

    def __init__(self, server: ForkServer, job: int) -> None:
        self.server = server
        self.job = job
        self.returncode: int | None = None
        self._pid: int | None = None

    @property
    def pid(self) -> int:
        """The worker's host pid (its process group too); 0 when it could not be found."""
        if self._pid is None:
            found = self.server.grandchild(timeout=5.0) if self.returncode is None else None
            self._pid = found or 0
        return self._pid

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.server.poll_exit(self.job, 0.0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self.server.poll_exit(
                self.job, 3600.0 if timeout is None else timeout
            )
        if self.returncode is None:
            raise subprocess.TimeoutExpired("forked worker", timeout or 0.0)
        return self.returncode


_SERVERS: dict[tuple[str, str], list[ForkServer]] = {}
_LOCK = threading.Lock()


def _forget_in_child() -> None:
    """In a process forked from a judge (a `fork` multiprocessing pool, say): the servers, their
    sockets and the lock are the parent's; this process starts its own when it judges."""
    global _SERVERS, _LOCK
    _SERVERS = {}
    _LOCK = threading.Lock()


os.register_at_fork(after_in_child=_forget_in_child)


def take(device: str, root: Path, spawn: object, prewarm: bool) -> ForkServer:
    """A server for `device` under `root` that is not running an evaluation: a free one, else a
    new one. With `prewarm`, where evaluations under `root` have run side by side (another server
    is busy now) and none is free, one more is started for whoever asks next. One process judging
    one candidate at a time keeps a single server: it is free again as soon as the evaluation
    ends, and a spare would cost a second start-up for nothing."""
    key = (device, str(root))
    with _LOCK:
        pool = _SERVERS.setdefault(key, [])
        for srv in list(pool):  # retired or dead, and its last evaluation's judge done with it
            if not srv.busy and (srv.retired or not srv.alive()):
                pool.remove(srv)
                srv.close()
        free = [s for s in pool if not s.busy]
        if free:
            chosen = free[0]
        else:
            chosen = ForkServer(device, root, spawn)
            pool.append(chosen)
        chosen.busy = True
        side_by_side = any(s.busy for s in pool if s is not chosen)
        if prewarm and side_by_side and not any(not s.busy for s in pool):
            pool.append(ForkServer(device, root, spawn))
    return chosen


def give_back(server: ForkServer, job: int) -> None:
    """After its worker was killed and waited for: the server takes the next evaluation, or is
    retired when it died, did not report the exit, or ran `MAX_JOBS`. A retired server is ended
    (its folder removed) at the next `take` or at exit, not now: the judge still reads the
    evaluation's folder inside it (the staged task file's check) after the worker is gone."""
    healthy = server.alive() and server._exits.pop(job, None) is not None
    with _LOCK:
        server.busy = False
        if not healthy or server.jobs >= MAX_JOBS:
            server.retired = True


def end_now(server: ForkServer) -> None:
    """Out of the pool and ended at once (one that never served an evaluation)."""
    with _LOCK:
        pool = _SERVERS.get((server.device, str(server.folder.parent)), [])
        if server in pool:
            pool.remove(server)
    server.close()


def live_servers() -> list[ForkServer]:
    """The servers this process keeps now (each has `folder`, its host `pid` and its bubblewrap
    process `proc`), for monitoring and tests."""
    with _LOCK:
        return [s for pool in _SERVERS.values() for s in pool]


def shut_down() -> None:
    """End every server (at exit)."""
    with _LOCK:
        servers = [s for pool in _SERVERS.values() for s in pool]
        _SERVERS.clear()
    for srv in servers:
        srv.close()


# --------------------------------------------------------------------------------------------
# the server (inside the sandbox)
# --------------------------------------------------------------------------------------------


def _imports() -> None:
    """What a worker imports before it says it is ready (`worker.preload`), done once here."""
    import benchmarks.harness.nest  # noqa: F401
    from benchmarks.harness.worker import preload

    preload()


def _worker(folder: Path, device: str, ops_fd: int) -> int:
    """The forked worker, pid 2 of its namespaces (as under bubblewrap, whose init is pid 1):
    its environment, descriptors and limits as a fresh worker's, then `worker.serve_one`."""
    import tempfile as _tempfile

    from benchmarks.harness import fallback, nest, worker

    os.chdir(folder)
    # its own /proc files readable to itself (only trusted processes share a pid namespace with it)
    nest.set_dumpable(True)
    os.setsid()
    for name, value in sandbox.worker_env(folder, device, base=os.environ).items():
        os.environ[name] = value
    _tempfile.tempdir = None
    for fd, name in ((1, "stdout.txt"), (2, "stderr.txt")):
        out = os.open(folder / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.dup2(out, fd)
        os.close(out)
    os.dup2(ops_fd, _OPS_FD)
    _close_all_but({0, 1, 2, _OPS_FD})
    fallback._OPS_FD = _OPS_FD
    fallback._OPS_ID = fallback.pipe_identity(_OPS_FD)
    sandbox.apply_limits(sandbox.limits_for(device))
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    return worker.serve_one(folder, device)


def _close_all_but(keep: set[int]) -> None:
    for fd in [int(n) for n in os.listdir("/proc/self/fd")]:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _exit_code(status: int) -> int:
    """A wait status as a shell reports it: the exit code, or 128 + N for signal N."""
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _init(folder: Path, server_folder: Path, device: str, ops_fd: int) -> int:
    """Pid 1 of the new namespaces: build the worker's view, drop every capability, start the
    worker, then only reap until the worker exits (its status is ours; when we exit the kernel
    kills whatever is left). Like bubblewrap's init it runs no candidate code, and signals from
    inside its namespace without a handler do not reach it (we keep none)."""
    from benchmarks.harness import nest

    size = sandbox.limits_for(device).tmpfs_size
    mounts = ["/dev/shm"] + (["/tmp"] if sandbox.TMP in sandbox.masked_dirs() else [])
    nest.private_view(folder, server_folder, mounts, size, sandbox.reexposed_dirs())
    nest.drop_capabilities()
    catchable = set(signal.Signals) - {signal.SIGKILL, signal.SIGSTOP}
    signal.pthread_sigmask(signal.SIG_BLOCK, catchable)
    worker_pid = os.fork()
    if worker_pid == 0:
        _run_then_exit(lambda: _worker(folder, device, ops_fd), "forked worker")
    _close_all_but({2})
    for sig in catchable:
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 70
        if pid == worker_pid:
            return _exit_code(status)


def _run_then_exit(body: object, what: str) -> None:
    """Run `body()` in a forked process and exit with its code (70 when it raised)."""
    code = 70
    try:
        code = body()  # type: ignore[operator]
    except BaseException as exc:  # noqa: BLE001 - said on stderr, which the judge keeps
        try:
            os.write(2, f"{what} failed: {type(exc).__name__}: {exc}\n".encode())
        except OSError:
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _middle(folder: Path, server_folder: Path, device: str, ops_fd: int) -> int:
    """The intermediate fork: new namespaces, then their init (`_init`, pid 1 of the new pid
    namespace); the init's exit status, 128 + N when killed by signal N."""
    from benchmarks.harness import nest

    nest.enter()
    pid = os.fork()
    if pid == 0:
        _run_then_exit(lambda: _init(folder, server_folder, device, ops_fd), "the worker's init")
    os.close(ops_fd)
    _, status = os.waitpid(pid, 0)
    return _exit_code(status)


def _self_test() -> str | None:
    """Whether a fork can enter nested namespaces here (a kernel or policy may forbid nested user
    namespaces where bubblewrap itself works); None when it can, else why not."""
    from benchmarks.harness import nest

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(r)
            nest.enter()
            code = 0
        except BaseException as exc:  # noqa: BLE001 - reported through the pipe
            os.write(w, f"{type(exc).__name__}: {exc}".encode()[:300])
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        said = f.read().decode(errors="replace")
    _, status = os.waitpid(pid, 0)
    return None if status == 0 else (said or f"the test fork exited with {status}")


def serve(server_folder: Path, device: str, control: int) -> int:
    from benchmarks.harness import nest

    _imports()
    nest.set_dumpable(False)
    sock = socket.socket(fileno=control)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    why = _self_test()
    sock.send(json.dumps({"ready": why is None, "why": why}).encode())
    if why is not None:
        return 1
    running: dict[int, int] = {}  # pid of the intermediate fork -> job
    while True:
        ready, _, _ = select.select([sock, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
        while True:  # reap: we are pid 1 of the sandbox
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            job = running.pop(pid, None)
            if job is not None:
                code = os.waitstatus_to_exitcode(status)
                sock.send(json.dumps({"job": job, "exit": code}).encode())
        if sock not in ready:
            continue
        msg, fds, _, _ = socket.recv_fds(sock, 4096, 4)
        if not msg:
            return 0
        request = json.loads(msg)
        folder = Path(request["folder"])
        if len(fds) != 1 or folder.parent != server_folder or running:
            for fd in fds:
                os.close(fd)
            sock.send(json.dumps({"job": request.get("job"), "exit": 70}).encode())
            continue
        pid = os.fork()
        if pid == 0:
            code = 70
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                sock.close()
                os.close(wake_r)
                os.close(wake_w)
                code = _middle(folder, server_folder, device, fds[0])
            except BaseException as exc:  # noqa: BLE001
                try:
                    os.write(2, f"fork server: {type(exc).__name__}: {exc}\n".encode())
                except OSError:
                    pass
            finally:
                os._exit(code)
        os.close(fds[0])
        running[pid] = int(request["job"])


if __name__ == "__main__":
    try:
        code = serve(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]))
    except BaseException as exc:  # noqa: BLE001 - the judge reads the log
        print(f"fork server stopped: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
