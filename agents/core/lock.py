"""One owner at a time for a run directory or a bench folder.

    with hold(run.path, "run"):      # FolderLocked when another process (or thread) owns it
        ...                          # the whole life of the run

`hold` takes an exclusive `fcntl.flock` on `<folder>/owner.lock` and keeps it until the block
ends. The kernel drops the lock when its owner's process dies, however it dies (`kill -9`
included), so a crashed owner never leaves the folder locked, and there is no stale lock to
clean up. The file stays; it names the owner (pid, host, start time, command) so that a second
process refused the folder can say who holds it. The descriptor is not inherited across `exec`
(Python's default), so a judge worker left running never keeps a dead owner's lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agents.core.redact import scrub

LOCK_FILE = "owner.lock"
# how long a refused process waits for the owner to finish writing its name into the file
_READ_GRACE_S = 1.0


class FolderLocked(RuntimeError):
    """The folder is owned by another process (or another thread of this one)."""

    def __init__(self, folder: Path, what: str, holder: dict[str, Any], again: str) -> None:
        self.folder = folder
        self.holder = holder
        if holder:
            who = (
                f"pid {holder.get('pid')} on {holder.get('host')} since {holder.get('started')} "
                f"({holder.get('command')})"
            )
        else:
            who = "another process (it has not written its name yet)"
        super().__init__(
            f"{what} {folder} is in use by {who}: one process at a time may work on it; "
            f"wait for that one to end (or stop it), then run {again}"
        )


def _holder() -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": scrub(shlex.join(["kernforge", *sys.argv[1:]])),
    }


def _gone(holder: dict[str, Any]) -> bool:
    """True when the named owner is a process of this host that no longer exists: a name left
    by a killed owner, read in the moment after the new owner locked and before it wrote its own."""
    pid = holder.get("pid")
    if holder.get("host") != socket.gethostname() or not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, owned by another user
    return False


def _read_holder(path: Path) -> dict[str, Any]:
    """The owner named in the lock file; {} when it is not written (yet) or not readable."""
    deadline = time.monotonic() + _READ_GRACE_S
    while True:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data and not _gone(data):
                return data
        except (OSError, ValueError):
            pass
        if time.monotonic() >= deadline:
            return {}
        time.sleep(0.05)


@contextmanager
def hold(folder: Path, what: str = "run", again: str = "the same command") -> Iterator[None]:
    """Own `folder` for the block: `FolderLocked` (naming the owner) when another holds it.
    `what` names the folder in the message, `again` the command to repeat later."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FolderLocked(folder, what, _read_holder(path), again) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(_holder()) + "\n").encode("utf-8"), 0)
        os.fsync(fd)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # owned by nobody: the name goes with the lock
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
