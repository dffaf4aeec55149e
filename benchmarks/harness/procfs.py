"""What /proc says about processes: start times (to tell a process from a later one that reuses its
pid), parents, resident memory, working directories. Linux only; every reader returns None (or
skips the process) when the process is gone or unreadable."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat(pid: int, proc: str = "/proc") -> list[str] | None:
    """The fields of <proc>/<pid>/stat after the command name (state first), or None. Read with
    plain file calls: the watchdog reads one per process per look."""
    try:
        with open(f"{proc}/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data.rsplit(b")", 1)[-1].split()
    return [b.decode() for b in fields] if len(fields) > 19 else None


def process_start(pid: int, proc: str = "/proc") -> tuple[str, str] | None:
    """(state, start time) of a process from <proc>/<pid>/stat, or None when there is none. The
    start time tells a process from a later one that reuses its pid."""
    fields = _stat(pid, proc)
    return (fields[0], fields[19]) if fields else None


def alive(pid: int, started: str) -> bool:
    """Whether process `pid` that started at `started` still runs (a zombie has exited)."""
    seen = process_start(pid)
    return seen is not None and seen[1] == started and seen[0] not in ("Z", "X")


@dataclass(frozen=True)
class Proc:
    """One process as /proc shows it: pid, parent, process group, session, state."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str


def pids(proc: str = "/proc") -> list[int]:
    """Every process id listed in `proc` (a procfs mount)."""
    try:
        return [int(n) for n in os.listdir(proc) if n.isdigit()]
    except OSError:
        return []


def read(pid: int, proc: str = "/proc") -> Proc | None:
    fields = _stat(pid, proc)
    if fields is None:
        return None
    return Proc(pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0])


def family(root: int) -> list[int]:
    """`root`, its descendants, and the members of its process group (host pids): the processes a
    worker started in its own session, found by one pass over /proc."""
    table = [p for p in map(read, pids()) if p is not None]
    children: dict[int, list[int]] = {}
    for p in table:
        children.setdefault(p.ppid, []).append(p.pid)
    found: set[int] = set()
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    found.update(p.pid for p in table if p.pgid == root)
    listed = {p.pid for p in table}
    return sorted(found & listed)


def resident_bytes(pid: int, proc: str = "/proc") -> int:
    """Resident memory of a process in bytes (0 when it is gone)."""
    try:
        with open(f"{proc}/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _rollup(pid: int, proc: str) -> dict[str, int]:
    """The byte counts of a process's smaps_rollup ("Pss", "Pss_Anon", ...); {} when it is gone
    or unreadable. Costs a walk of its page tables (about a millisecond for a worker)."""
    fields: dict[str, int] = {}
    try:
        for line in Path(f"{proc}/{pid}/smaps_rollup").read_text().splitlines():
            name, _, rest = line.partition(":")
            if rest.strip().endswith("kB"):
                fields[name] = int(rest.split()[0]) * 1024
    except (OSError, IndexError, ValueError):
        return {}
    return fields


def proportional_bytes(pid: int, proc: str = "/proc") -> int:
    """Proportional set size of a process in bytes: its resident pages, each shared one divided
    among the processes that map it (a fork's copy-on-write pages are not counted twice): used to
    confirm a resident sum that looks over a limit. 0 when it is gone or unreadable."""
    return _rollup(pid, proc).get("Pss", 0)


def memory_parts(pid: int, proc: str = "/proc") -> dict[str, int]:
    """A process's proportional resident bytes by kind: "anon" (heap, stacks), "file" (mapped
    files: libraries), "shmem" (shared memory and tmpfs files it maps); {} when it is gone or
    unreadable. Read when a limit is crossed, to say what held the memory."""
    fields = _rollup(pid, proc)
    keys = {"Pss_Anon": "anon", "Pss_File": "file", "Pss_Shmem": "shmem"}
    return {kind: fields[name] for name, kind in keys.items() if name in fields}


def oom_kills() -> int | None:
    """How many processes the kernel's out-of-memory killer has killed since boot, machine-wide
    (`oom_kill` in /proc/vmstat, Linux 4.13+); None where it cannot be read."""
    try:
        for line in Path("/proc/vmstat").read_text().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def cwd(pid: int) -> str | None:
    """A process's working directory as this process sees it, or None."""
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None
