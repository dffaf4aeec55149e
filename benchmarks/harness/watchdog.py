"""The judge's watch over a running candidate: memory, processes and disk, from outside.

The rlimits (`benchmarks.harness.sandbox.Limits`) bound each process; they do not bound the sum
over a fork bomb, and on CUDA the address space is unlimited (the driver needs it), and Linux does
not enforce the process-count limit for root. So while a candidate's worker runs, the judge looks,
every `WatchLimits.poll_s`, at

- **memory**: resident bytes summed over the candidate's processes (a sum over the limit is
  confirmed with proportional set sizes, so pages that forks share count once);
- **processes**: how many are alive at once;
- **disk**: bytes and entries in the worker's exchange folder (in /dev/shm: memory, no quota), and
  how full the sandbox's own tmpfs are (`/tmp`, `/dev/shm`, the folder's `tmp/`, each capped by
  `Limits.tmpfs_size`; a full one means the candidate wrote until the kernel refused).

The candidate's processes are, under bubblewrap, every process of its pid namespace (listed
through the procfs the sandbox mounted, seen from its init: `/proc/<init>/root/proc`); unisolated,
the worker, its descendants and its process group (`procfs.family`). A limit crossed is reported as
`Exceeded`; the judge kills the worker (the whole namespace) and gives the verdict
`resource_limit`. While the candidate has more processes than an honest worker
(`FEW_PROCESSES`), the judge looks ten times as often: a fork bomb doubles every few ms.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.harness import procfs

GiB = 1 << 30
MiB = 1 << 20
# an honest worker is at most this many processes (the sandbox's init, the worker, the sentinel
# when unisolated, a compiler process on CUDA); past it the watchdog looks ten times as often
FEW_PROCESSES = 4


@dataclass(frozen=True)
class WatchLimits:
    """What a candidate's processes may hold at once while the judge watches them."""

    memory: int  # resident bytes, summed over the candidate's processes
    processes: int  # processes alive at once (the sandbox's init and the worker included)
    folder_bytes: int  # bytes allocated in the worker's exchange folder
    folder_files: int  # files and folders in it (and inodes in each sandbox tmpfs)
    poll_s: float  # seconds between two looks


def watch_limits(device: str) -> WatchLimits:
    """The limits for a worker on `device`.

    A CPU worker (torch, triton, the interpreter's small shapes) stays near 0.5 GiB resident; a
    CUDA worker holds 2 to 4 GiB of host memory (driver, libraries, staging). An honest worker is 2
    processes (3 unisolated: the sentinel) and a few short-lived compiler processes on CUDA. Its
    folder holds a handful of files: the progress log, each trial's outputs until the judge has
    read them (one trial file is at most `Limits.file_size`), the result. A look costs well under
    a millisecond (docs/reliability/processes.md), so a tenth of a second bounds what a candidate
    can allocate or write past a limit to what it does in that time."""
    cuda = device == "cuda"
    return WatchLimits(
        memory=(32 if cuda else 4) * GiB,
        processes=64,
        folder_bytes=(32 if cuda else 2) * GiB,
        folder_files=10_000,
        poll_s=0.1,
    )


@dataclass(frozen=True)
class Exceeded:
    """A limit the candidate's processes crossed: which ("memory", "processes", "disk") and a
    sentence saying by how much."""

    what: str
    message: str


def _largest(proc: str, sized: dict[int, int]) -> str:
    """'; the largest, pid N: anon ..., file ..., shmem ...' for the largest of `sized` (pid ->
    bytes: what held the memory, for the verdict's reader), or '' when it could not be read."""
    if not sized:
        return ""
    pid = max(sized, key=lambda p: sized[p])
    parts = procfs.memory_parts(pid, proc)
    if not parts:
        return ""
    return f"; the largest, pid {pid}: " + ", ".join(f"{k} {_gib(v)}" for k, v in parts.items())


def _gib(n: int) -> str:
    return f"{n / GiB:.2f} GiB" if n >= GiB else f"{n / MiB:.0f} MiB"


class Watchdog:
    """Looks at one worker's processes and folder; `check` says what was exceeded, if anything.

    `root`: the sandbox init's host pid (bwrap) or the worker's pid (unisolated). `mounts`: the
    sandbox's writable tmpfs (paths inside it) and their size; empty when unisolated."""

    def __init__(
        self,
        root: int,
        folder: Path,
        limits: WatchLimits,
        *,
        sandboxed: bool,
        nested: bool = False,
        mounts: list[str] | None = None,
        tmpfs_size: int = 0,
    ) -> None:
        """`nested`: `root` is a worker forked from the fork server, pid 1 of namespaces nested
        in the server's sandbox, whose /proc lists the server's processes too: its processes are
        its descendants, found in this machine's /proc."""
        self.root, self.folder, self.limits = root, folder, limits
        self.nested = nested
        self.sandboxed, self.mounts, self.tmpfs_size = sandboxed, mounts or [], tmpfs_size
        self._next = 0.0
        self._ready = False
        self._many = False
        self.looks = 0  # how many checks ran (for the cost figures)
        self.seconds = 0.0  # and the time they took

    def due(self, now: float) -> bool:
        """Whether it is time for the next look (`now`: time.perf_counter())."""
        return now >= self._next

    def check(self) -> Exceeded | None:
        """One look at memory, processes and disk; the first limit crossed, or None."""
        t0 = time.perf_counter()
        self._many = False
        try:
            return self._processes() or self._folder() or self._mounts()
        finally:
            self.looks += 1
            self.seconds += time.perf_counter() - t0
            # more processes than an honest worker has: a fork bomb doubles every few ms, so
            # look ten times as often until they are few again
            interval = self.limits.poll_s / (10 if self._many else 1)
            self._next = time.perf_counter() + interval

    # -- memory and processes -------------------------------------------------------------

    def _inside(self) -> bool:
        """Whether the sandbox is set up: its init's root holds a procfs of its own (bubblewrap
        reports the init's pid before it has mounted anything; until then its root is ours), or
        for a forked worker, the folder's tmp/ is its own tmpfs."""
        if not self._ready:
            try:
                if self.nested:  # its tmp/ is a tmpfs of its own once its view is built
                    theirs = os.stat(f"/proc/{self.root}/root{self.folder.resolve()}/tmp").st_dev
                    self._ready = theirs != os.stat(self.folder).st_dev
                else:
                    theirs = os.stat(f"/proc/{self.root}/root/proc").st_dev
                    self._ready = theirs != os.stat("/proc").st_dev
            except OSError:
                return False
        return self._ready

    def _listing(self) -> tuple[str, list[int]]:
        """(procfs path, pids in it) for the candidate's processes."""
        if self.sandboxed and not self.nested and self._inside():
            proc = f"/proc/{self.root}/root/proc"
            found = procfs.pids(proc)
            if found:
                return proc, found
        return "/proc", procfs.family(self.root)

    def _processes(self) -> Exceeded | None:
        proc, found = self._listing()
        lim = self.limits
        self._many = len(found) > FEW_PROCESSES
        if len(found) > lim.processes:
            return Exceeded(
                "processes",
                f"the candidate's processes numbered {len(found)} (limit {lim.processes})",
            )
        resident = sum(procfs.resident_bytes(pid, proc) for pid in found)
        if resident <= lim.memory:
            return None
        # forks share pages: confirm with each page counted once
        sized = {pid: procfs.proportional_bytes(pid, proc) for pid in found}
        resident = sum(sized.values())
        if resident > lim.memory:
            return Exceeded(
                "memory",
                f"the candidate's processes held {_gib(resident)} of memory (limit {_gib(lim.memory)})"
                + _largest(proc, sized),
            )
        return None

    # -- disk -----------------------------------------------------------------------------

    def _folder(self) -> Exceeded | None:
        lim = self.limits
        size, entries = 0, 0
        todo = [self.folder]
        while todo:
            try:
                with os.scandir(todo.pop()) as it:
                    for entry in it:
                        entries += 1
                        if entries > lim.folder_files:
                            return Exceeded(
                                "disk",
                                f"the candidate wrote more than {lim.folder_files} files in its "
                                "worker folder",
                            )
                        try:
                            if entry.is_dir(follow_symlinks=False):
                                todo.append(Path(entry.path))
                            else:
                                size += entry.stat(follow_symlinks=False).st_blocks * 512
                        except OSError:
                            continue
            except OSError:
                continue
        if size > lim.folder_bytes:
            return Exceeded(
                "disk",
                f"the candidate wrote {_gib(size)} into its worker folder (limit {_gib(lim.folder_bytes)})",
            )
        return None

    def _mounts(self) -> Exceeded | None:
        if not (self.sandboxed and self._inside()):
            return None
        for mount in self.mounts:
            try:
                st = os.statvfs(f"/proc/{self.root}/root{mount}")
            except OSError:
                continue
            free = st.f_bavail * st.f_frsize
            inodes = st.f_files - st.f_ffree
            if free < 64 * 1024:
                return Exceeded(
                    "disk",
                    f"the candidate filled the sandbox's {mount} ({_gib(self.tmpfs_size)} tmpfs)",
                )
            if inodes > self.limits.folder_files:
                return Exceeded(
                    "disk",
                    f"the candidate made {inodes} files in the sandbox's {mount} "
                    f"(limit {self.limits.folder_files})",
                )
        return None
