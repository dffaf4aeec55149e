"""Worker folders that outlived the judge that made them, found and removed.

A worker's folder is named for its owner, `kf-judge-<pid>-<start>-<random>`: the judge's pid and
its start time (clock ticks since boot, from /proc), so a later process that reuses the pid is
not taken for it. The owner is in the name, not in a file, because the candidate may write
inside its folder but cannot rename it. A judge killed with SIGKILL cleans nothing up; the next
judge to use the same root (`sweep`, once per root and process, from `child.acquire`) removes the
folders whose owner is gone, after killing any process still working in one (a process whose
working directory is inside it: every worker and candidate process starts there).

Folders named the older way, `kf-judge-<random>`, carry no owner: one is removed when no process
works in it and nothing in it changed for `UNOWNED_AGE_S` seconds.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import time
from pathlib import Path

from benchmarks.harness import procfs

PREFIX = "kf-judge-"
UNOWNED_AGE_S = 600.0
_OWNED = re.compile(rf"^{PREFIX}(\d+)-(\d+)-")


def owner_prefix() -> str:
    """The folder-name prefix that names this process as the owner."""
    seen = procfs.process_start(os.getpid())
    started = seen[1] if seen else "0"
    return f"{PREFIX}{os.getpid()}-{started}-"


def owner_of(name: str) -> tuple[int, str] | None:
    """(pid, start time) of the judge that made folder `name`, or None for an unowned name."""
    m = _OWNED.match(name)
    return (int(m[1]), m[2]) if m else None


def _working_in(folders: list[Path]) -> dict[Path, list[int]]:
    """For each folder, the processes whose working directory is inside it (one pass over /proc)."""
    found: dict[Path, list[int]] = {f: [] for f in folders}
    if not folders:
        return found
    me = os.getpid()
    for pid in procfs.pids():
        where = procfs.cwd(pid)
        if pid == me or where is None:
            continue
        here = Path(where.removesuffix(" (deleted)"))
        for folder in folders:
            if here == folder or folder in here.parents:
                found[folder].append(pid)
    return found


def _dead(folder: Path, busy: list[int], now: float) -> bool:
    owner = owner_of(folder.name)
    if owner is not None:
        return not procfs.alive(*owner)
    if busy:
        return False
    try:
        return now - folder.stat().st_mtime > UNOWNED_AGE_S
    except OSError:
        return False


def sweep(root: Path) -> list[Path]:
    """Remove the worker folders under `root` whose judge is gone (see the module's docstring),
    killing the processes still working in them; the folders removed."""
    try:
        folders = sorted(
            p.resolve() for p in root.iterdir() if p.name.startswith(PREFIX) and p.is_dir()
        )
    except OSError:
        return []
    owned_alive = [f for f in folders if (o := owner_of(f.name)) and procfs.alive(*o)]
    candidates = [f for f in folders if f not in owned_alive]
    busy = _working_in(candidates)
    now = time.time()
    removed = []
    for folder in candidates:
        if not _dead(folder, busy[folder], now):
            continue
        for pid in busy[folder]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed.append(folder)
    return removed
