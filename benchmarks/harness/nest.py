"""Namespaces nested inside a sandbox, for a worker forked from the fork server.

The fork server (`benchmarks.harness.forkserver`) runs inside bubblewrap with torch and Triton
imported and never runs candidate code. For each evaluation it forks; the fork calls `enter`
(a user namespace of its own with mount, pid and IPC namespaces), forks again, and that second
fork, pid 1 of the new pid namespace, builds the view a fresh bubblewrap worker would have
(`private_view`): fresh tmpfs on /dev/shm, /tmp and the folder's tmp/, every other worker folder
hidden, inputs/ read-only. It then drops every capability (`drop_capabilities`) before the
candidate's code can run. When it exits, by itself or killed, the kernel kills everything the
candidate started, and its mounts and IPC objects go with the namespaces.

Linux only; the calls go through libc with ctypes (Python 3.11 has no `os.unshare`)."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000

PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


class NestError(OSError):
    """A namespace, mount or capability call failed: the worker must not run."""


_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise NestError(err, f"{what}: {os.strerror(err)}")


def _prctl(option: int, arg: int = 0, arg3: int = 0) -> int:
    return _libc.prctl(
        ctypes.c_int(option),
        ctypes.c_ulong(arg),
        ctypes.c_ulong(arg3),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
    )


def set_dumpable(on: bool) -> None:
    """Whether processes of this user may trace this one or read its memory through /proc (off
    for the server and the intermediate fork: a candidate sees them in the sandbox's /proc)."""
    _check(_prctl(PR_SET_DUMPABLE, 1 if on else 0), "prctl(PR_SET_DUMPABLE)")


def enter() -> None:
    """Move this process into a new user namespace (mapping only its own uid and gid) with new
    mount, pid and IPC namespaces, all mounts private. Its next child is pid 1 of the new pid
    namespace."""
    uid, gid = os.getuid(), os.getgid()
    _check(
        _libc.unshare(ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC)),
        "unshare(user, mount, pid, ipc)",
    )
    if uid == 0 or gid == 0:  # the kernel refuses to map the parent's root without CAP_SETFCAP
        raise NestError(1, "the server must not run as root inside its sandbox (bwrap --uid)")
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
    Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None, "make mounts private")


def _mount(
    src: str | None, dst: str, fstype: str | None, flags: int, data: str | None, what: str
) -> None:
    _check(
        _libc.mount(
            None if src is None else src.encode(),
            dst.encode(),
            None if fstype is None else fstype.encode(),
            ctypes.c_ulong(flags),
            None if data is None else data.encode(),
        ),
        f"mount ({what}) on {dst}",
    )


def tmpfs(path: str, size: int) -> None:
    """A fresh tmpfs of `size` bytes on `path` (no devices, no set-uid)."""
    _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=1777", "tmpfs")


def _read_only(path: str) -> None:
    _mount(
        None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, None, "read-only"
    )


def private_view(
    folder: Path, hide: Path, tmpfs_dirs: list[str], size: int, keep: list[Path]
) -> None:
    """Build the worker's view: a fresh tmpfs of `size` on each of `tmpfs_dirs` (/dev/shm, /tmp)
    with the folders of `keep` that were inside them (the project, the venv: what bubblewrap binds
    back read-only, `sandbox.reexposed_dirs`) bound back read-only; everything under `hide` (the
    server's folder, which holds other evaluations' folders) hidden by a read-only tmpfs except
    `folder` itself, bound back writable; its inputs/ read-only and its tmp/ a fresh tmpfs."""
    covered = [p for p in keep if any(p == Path(d) or Path(d) in p.parents for d in tmpfs_dirs)]
    fds = {p: os.open(p, os.O_PATH | os.O_DIRECTORY) for p in covered}
    own = os.open(folder, os.O_PATH | os.O_DIRECTORY)
    try:
        for d in tmpfs_dirs:
            tmpfs(d, size)
        for p, fd in fds.items():
            p.mkdir(parents=True, exist_ok=True)  # in the fresh tmpfs
            _mount(f"/proc/self/fd/{fd}", str(p), None, MS_BIND | MS_REC, None, "read-only bind")
            _read_only(str(p))
        hide.mkdir(parents=True, exist_ok=True)  # where a fresh tmpfs above just hid it
        _mount("tmpfs", str(hide), "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755", "hide")
        folder.mkdir(parents=True, exist_ok=True)
        _mount(f"/proc/self/fd/{own}", str(folder), None, MS_BIND, None, "the worker's folder")
        _read_only(str(hide))
    finally:
        for fd in (*fds.values(), own):
            os.close(fd)
    inputs = str(folder / "inputs")
    _mount(inputs, inputs, None, MS_BIND, None, "inputs")
    _read_only(inputs)
    tmpfs(str(folder / "tmp"), size)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def drop_capabilities() -> None:
    """No capabilities left in any set, none to be gained by exec (no_new_privs), the bounding
    set emptied: the mounts above can be neither undone nor changed."""
    _check(_prctl(PR_SET_NO_NEW_PRIVS, 1), "prctl(PR_SET_NO_NEW_PRIVS)")
    for cap in range(64):
        if _prctl(PR_CAPBSET_DROP, cap) != 0 and ctypes.get_errno() != 22:  # EINVAL: no such cap
            _check(-1, f"prctl(PR_CAPBSET_DROP, {cap})")
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def capabilities() -> dict[str, int]:
    """This process's capability sets, from /proc/self/status (for tests and `doctor`)."""
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")):
            name, value = line.split(":")
            found[name] = int(value.strip(), 16)
    return found
