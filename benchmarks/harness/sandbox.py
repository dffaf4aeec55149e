"""OS isolation for the worker processes that run candidates.

The static check gives early, clear messages; it is not the wall. The wall is here: a candidate's
worker (`benchmarks.harness.worker`, started by `benchmarks.harness.child.Child`) runs inside
bubblewrap (`bwrap`) where it works, with

- no network (its own network namespace: not even the host's loopback),
- its own pid namespace (it cannot see or signal the judge; `/proc` shows only its own
  processes; when the worker exits, by itself or killed, the kernel kills everything it started,
  `setsid` daemons and double forks included), `--die-with-parent` and `--new-session`,
- a read-only view of the system's folders (`SYSTEM_DIRS`: /usr, /etc, /opt, /sys and the
  /bin, /lib links) and of the folders the worker needs (project tree, venv, Python, its import
  paths), and nothing else of the host (no /var, /srv, /mnt, /work, data folders); /etc's entries
  that others may not read (/etc/shadow, ssh host keys) hidden; a private exchange folder;
  `/root`, `/home`, the user's HOME, `/var/tmp` and `/run` replaced by empty
  read-only folders (so `~/.ssh`, `~/.netrc` and host sockets are out of reach), the paths Python
  needs bound back read-only; `/tmp`, `/dev/shm` and the folder's `tmp/` (TMPDIR, caches) are
  tmpfs of a fixed size (`Limits.tmpfs_size`), gone with the sandbox; `/dev` is read-only; no
  capabilities,
- a scrubbed environment built from an allow-list (no API keys, tokens or the user's HOME),
- rlimits (processes, address space, CPU time, file size, open files), and on CUDA the GPU's
  device nodes bound in.

Where bubblewrap is absent or cannot run (no user namespaces, say) the level is "none": the
worker still gets the scrubbed environment and the rlimits, but no namespaces. Then kernels this
project wrote (offline generator, knowledge base) run with a one-line warning and model-written or
imported candidates are refused (`refusal`) unless the caller opts in to the unsafe mode
(`JudgeConfig(allow_unisolated=True)`, `kernforge eval --unsafe-no-isolation`, or the environment
variable KERNFORGE_UNSAFE_NO_ISOLATION=1).
"""

from __future__ import annotations

import functools
import glob
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from benchmarks.harness.procfs import process_start

BWRAP = "bwrap"
NONE = "none"

UNSAFE_ENV = "KERNFORGE_UNSAFE_NO_ISOLATION"
REPO_ROOT = Path(__file__).resolve().parents[2]
GiB = 1 << 30

# Environment variables a candidate's worker inherits from the judge, by exact name (plus LC_*).
# Everything else is dropped: API keys, tokens, HOME, the user's configuration.
ALLOWED_ENV = frozenset(
    {
        "PATH",
        "LANG",
        "LANGUAGE",
        "TZ",
        "LD_LIBRARY_PATH",
        "CUDA_VISIBLE_DEVICES",
        "CUDA_DEVICE_ORDER",
        "CUDA_HOME",
        "CUDA_PATH",
        "NVIDIA_VISIBLE_DEVICES",
        "NVIDIA_DRIVER_CAPABILITIES",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "PYTORCH_CUDA_ALLOC_CONF",
        "TRITON_PTXAS_PATH",
        "TRITON_LIBCUDA_PATH",
    }
)
ALLOWED_ENV_PREFIXES = ("LC_",)


MiB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """Resource limits set on a candidate's worker before it starts (None = unlimited). What the
    judge watches while it runs (memory summed over its processes, their number, the exchange
    folder) is `benchmarks.harness.watchdog.WatchLimits`."""

    processes: int  # RLIMIT_NPROC (threads count too; not enforced by Linux for root)
    address_space: int | None  # RLIMIT_AS, bytes
    cpu_s: int  # RLIMIT_CPU, seconds of CPU time summed over threads
    file_size: int  # RLIMIT_FSIZE, bytes per file written
    open_files: int  # RLIMIT_NOFILE
    tmpfs_size: int  # bytes of each writable tmpfs in the sandbox (/tmp, /dev/shm, folder/tmp)


def limits_for(device: str) -> Limits:
    """The limits for a worker on `device`.

    A CPU worker with torch and triton imported maps under 1 GiB; 8 GiB leaves room for the
    interpreter's small shapes. On CUDA the address space stays unlimited: the driver reserves
    virtual ranges far larger than the GPU's memory for unified addressing at initialisation, and
    a limit makes `cuInit` fail. CPU time is a backstop behind the judge's wall-clock timeout (a
    spare waits up to an hour, sleeping). Trial files hold one output and its repeat. The
    scratch tmpfs hold Triton's cache and compiler temporaries (a few MiB per kernel); what is
    written there is memory, so each is small."""
    return Limits(
        processes=4096,
        address_space=None if device == "cuda" else 8 * GiB,
        cpu_s=3600,
        file_size=(16 if device == "cuda" else 2) * GiB,
        open_files=4096,
        tmpfs_size=(1024 if device == "cuda" else 256) * MiB,
    )


def apply_limits(limits: Limits) -> None:
    """Set `limits` on this process (run in the child between fork and exec). A limit above the
    current hard limit is lowered to it: only root may raise a hard limit."""

    def cap(which: int, value: int | None, hard_extra: int = 0) -> None:
        _, hard = resource.getrlimit(which)
        soft = resource.RLIM_INFINITY if value is None else value
        new_hard = resource.RLIM_INFINITY if value is None else value + hard_extra
        if hard != resource.RLIM_INFINITY:
            soft = hard if soft == resource.RLIM_INFINITY else min(soft, hard)
            new_hard = hard if new_hard == resource.RLIM_INFINITY else min(new_hard, hard)
        resource.setrlimit(which, (soft, new_hard))

    cap(resource.RLIMIT_NPROC, limits.processes)
    cap(resource.RLIMIT_AS, limits.address_space)
    cap(resource.RLIMIT_CPU, limits.cpu_s, hard_extra=10)  # SIGXCPU first, SIGKILL 10 s later
    cap(resource.RLIMIT_FSIZE, limits.file_size)
    cap(resource.RLIMIT_NOFILE, limits.open_files)


# --------------------------------------------------------------------------------------------
# what this machine offers
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Available:
    """The isolation this machine offers: `level` is "bwrap" or "none"; `reason` says why."""

    level: str
    reason: str


@functools.cache
def detect() -> Available:
    """Probe once per process: bubblewrap on PATH and able to run a trivial command with the
    flags a worker gets (user and pid namespaces, no network, capabilities dropped)."""
    path = shutil.which("bwrap")
    if path is None:
        return Available(NONE, "bubblewrap (bwrap) is not installed; apt-get install bubblewrap")
    with tempfile.TemporaryDirectory(prefix="kf-sandbox-probe-") as tmp:
        folder = Path(tmp)
        (folder / "inputs").mkdir()
        argv = [*bwrap_prefix(folder, "cpu", bwrap=path), sys.executable, "-c", "pass"]
        try:
            proc = subprocess.run(
                argv, env=worker_env(folder, "cpu"), capture_output=True, text=True, timeout=60
            )
        except (OSError, subprocess.SubprocessError) as exc:
            return Available(NONE, f"{path} does not run: {type(exc).__name__}: {exc}")
    if proc.returncode != 0:
        why = (proc.stderr or proc.stdout).strip().splitlines()
        return Available(
            NONE,
            f"{path} cannot start a sandbox here (exit {proc.returncode}: "
            f"{why[-1] if why else 'no message'}); user namespaces may be disabled",
        )
    return Available(BWRAP, f"{path}: network, pid, mount, ipc and user namespaces")


def level() -> str:
    """The isolation level candidates run under on this machine: "bwrap" or "none"."""
    return detect().level


def describe() -> str:
    """One line for `kernforge doctor`."""
    found = detect()
    if found.level == BWRAP:
        return (
            f"bwrap ({found.reason}; read-only view of the system and the project, nothing else "
            "of the host, a scratch folder, home hidden, scrubbed environment, rlimits)"
        )
    return f"none: {found.reason}. Project-written kernels run with a warning; other candidates are refused"


# --------------------------------------------------------------------------------------------
# who may run where no isolation exists
# --------------------------------------------------------------------------------------------

_warned = False


def refusal(*, trusted: bool, allow_unisolated: bool) -> str | None:
    """Why a candidate may not run here, or None when it may.

    With bubblewrap every candidate runs isolated. Without it, a candidate the project wrote
    (`trusted`) runs with a one-line warning on stderr; any other runs only when the caller opted
    in to the unsafe mode (`allow_unisolated`, or the environment variable KERNFORGE_UNSAFE_NO_ISOLATION=1)."""
    global _warned
    found = detect()
    if found.level != NONE:
        return None
    unsafe = allow_unisolated or os.environ.get(UNSAFE_ENV) == "1"
    if not (trusted or unsafe):
        return (
            f"refused to run this candidate: no OS isolation is available here ({found.reason}), "
            "and it was not written by this project. Install bubblewrap, or opt in to running it "
            f"unisolated with `kernforge eval --unsafe-no-isolation`, JudgeConfig(allow_unisolated=True) "
            f"or {UNSAFE_ENV}=1 (the candidate then runs as you, able to read your files)"
        )
    if not _warned:
        _warned = True
        who = "project-written kernels" if trusted else "candidates (unsafe mode chosen)"
        print(
            f"kernforge: warning: no OS isolation ({found.reason}); {who} run unisolated",
            file=sys.stderr,
        )
    return None


# --------------------------------------------------------------------------------------------
# the worker's command line and environment
# --------------------------------------------------------------------------------------------


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _outermost(paths: list[Path]) -> list[Path]:
    """`paths` resolved, existing, without duplicates and without those inside another."""
    seen: list[Path] = []
    for p in sorted({p for p in paths if p.is_dir()}, key=lambda q: len(q.parts)):
        if not any(_under(p, q) for q in seen):
            seen.append(p)
    return seen


def masked_dirs() -> list[Path]:
    """Folders replaced by an empty tmpfs in the sandbox: homes, temporary folders, host sockets."""
    names = ["/root", "/home", os.environ.get("HOME", ""), "/tmp", "/var/tmp", "/run"]
    found = []
    for name in names:
        if not name:
            continue
        p = Path(name).resolve()
        if p != Path("/"):
            found.append(p)
    return _outermost(found)


def _needed_dirs() -> list[Path]:
    """Folders the worker must read: the project, the Python installation, its import paths."""
    import site

    paths = [REPO_ROOT, Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)]
    paths.append(Path(os.path.realpath(sys.executable)).parent)
    paths += [Path(p) for p in site.getsitepackages()]
    for var in ("PYTHONPATH", "LD_LIBRARY_PATH"):
        paths += [Path(p) for p in os.environ.get(var, "").split(os.pathsep) if p]
    return [p.resolve() for p in paths]


def reexposed_dirs(masks: list[Path] | None = None) -> list[Path]:
    """Folders the worker needs that sit inside a masked folder: bound back read-only."""
    masks = masked_dirs() if masks is None else masks
    return _outermost([p for p in _needed_dirs() if any(_under(p, m) for m in masks)])


# The system's own folders, bound read-only into every sandbox (the interpreter, shared libraries,
# compilers Triton calls, /etc's configuration, CUDA under /usr/local or /opt). Everything else
# of the host (data folders, other projects, /var, /srv, /mnt, /work) is not in the sandbox at
# all unless the worker needs it (`_needed_dirs`). Until 2026-12-08 the sandbox bound all of /
# read-only: a judge running as root let a candidate read root-only files anywhere
# (tests/hostile/os_read_outside_view.py).
SYSTEM_DIRS = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/sys",
)
SECRETS_ROOT = Path("/etc")  # bound, but its entries "others" may not read are hidden


def view_dirs() -> list[Path]:
    """The host folders a sandbox sees (read-only): the system's and those the worker needs."""
    system = [Path(d) for d in SYSTEM_DIRS if os.path.isdir(d) and not os.path.islink(d)]
    return _outermost(system + _needed_dirs())


def view_links() -> list[tuple[str, str]]:
    """System folders that are symlinks (merged /usr: /bin -> usr/bin): (target, link)."""
    return [(os.readlink(d), d) for d in SYSTEM_DIRS if os.path.islink(d)]


@functools.lru_cache(maxsize=1)
def hidden_secrets() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Under /etc, (files, folders) that "others" may not read (/etc/shadow, ssh host keys,
    /etc/ssl/private): a judge running as root could read them, a candidate must not."""
    files: list[str] = []
    folders: list[str] = []
    for root, dirs, names in os.walk(SECRETS_ROOT):
        for d in list(dirs):
            path = os.path.join(root, d)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if not os.path.islink(path) and (mode & 0o005) != 0o005:
                folders.append(path)
                dirs.remove(d)
        for n in names:
            path = os.path.join(root, n)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if not os.path.islink(path) and os.path.isfile(path) and not st.st_mode & 0o004:
                files.append(path)
    return tuple(files), tuple(folders)


def gpu_nodes() -> list[str]:
    """The GPU device nodes a CUDA worker needs."""
    nodes = sorted(glob.glob("/dev/nvidia*"))
    nodes += [p for p in ("/dev/dri",) if os.path.exists(p)]
    return nodes


def visible(path: Path, folder: Path) -> bool:
    """Whether the worker sandboxed with scratch `folder` can read `path`."""
    path = path.resolve()
    if _under(path, folder.resolve()):
        return True
    if not any(_under(path, v) for v in view_dirs()):
        return False
    files, folders = hidden_secrets()
    if str(path) in files or any(_under(path, Path(f)) for f in folders):
        return False
    masks = masked_dirs()
    if not any(_under(path, m) for m in masks):
        return True
    return any(_under(path, r) for r in reexposed_dirs(masks))


def bwrap_prefix(folder: Path, device: str, *, bwrap: str = "bwrap") -> list[str]:
    """The bubblewrap arguments, up to and including `--`, that run a command sandboxed with
    `folder` as its only writable place; `folder/inputs` is bound read-only over it (for files
    the judge hands in, such as a task file the sandbox cannot otherwise see)."""
    folder = folder.resolve()
    size = str(limits_for(device).tmpfs_size)
    args = [
        bwrap,
        "--unshare-all",  # user, pid, network, ipc, uts, cgroup, mount
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
    ]
    for target, link in view_links():
        args += ["--symlink", target, link]
    for d in view_dirs():
        args += ["--ro-bind", str(d), str(d)]
    files, folders = hidden_secrets()
    for f in files:
        args += ["--ro-bind", "/dev/null", f]
    for d in folders:
        args += ["--tmpfs", d, "--remount-ro", d]
    args += ["--dev", "/dev"]
    if device == "cuda":
        for node in gpu_nodes():
            args += ["--dev-bind", node, node]
    # /dev itself read-only (device nodes still open for writing); its shm a sized tmpfs
    args += ["--remount-ro", "/dev", "--size", size, "--tmpfs", "/dev/shm", "--proc", "/proc"]
    masks = masked_dirs()
    for m in masks:
        args += (["--size", size] if m == TMP else []) + ["--tmpfs", str(m)]
    for r in reexposed_dirs(masks):
        args += ["--ro-bind", str(r), str(r)]
    for m in masks:
        if m != TMP:  # the hiding folders stay empty: nothing may be written there
            args += ["--remount-ro", str(m)]
    args += ["--bind", str(folder), str(folder)]
    args += ["--ro-bind", str(folder / "inputs"), str(folder / "inputs")]
    args += ["--size", size, "--tmpfs", str(folder / "tmp")]
    args += ["--remount-ro", "/"]  # the sandbox's own root: nothing new can be made in it
    args += ["--chdir", str(folder), "--"]
    return args


TMP = Path("/tmp")


def scratch_mounts(folder: Path) -> list[str]:
    """The sandbox's writable tmpfs (paths inside it), each `Limits.tmpfs_size` bytes: the
    judge's watchdog reads how full they are through the sandbox init's root."""
    mounts = ["/dev/shm", str(folder.resolve() / "tmp")]
    return mounts + ([str(TMP)] if TMP in masked_dirs() else [])


def worker_env(folder: Path, device: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a candidate's worker: the allow-listed variables of `base` (default:
    this process's environment), and HOME, TMPDIR and Triton's cache inside `folder`."""
    base = os.environ if base is None else base
    env = {k: v for k, v in base.items() if k in ALLOWED_ENV or k.startswith(ALLOWED_ENV_PREFIXES)}
    env.setdefault("PATH", os.defpath)
    extra = base.get("PYTHONPATH", "")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), extra]).rstrip(os.pathsep)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["HOME"] = str(folder)
    env["TMPDIR"] = str(folder / "tmp")  # a sized tmpfs under bwrap: scratch, never exchanged
    env["XDG_CACHE_HOME"] = str(folder / "tmp" / ".cache")
    env["TRITON_CACHE_DIR"] = str(folder / "tmp" / ".triton" / "cache")
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    return env


@dataclass
class Launch:
    """How to start one worker: its argv, environment, pre-exec hook and isolation level."""

    argv: list[str]
    env: dict[str, str]
    preexec_fn: Callable[[], None] | None
    isolation: str


def candidate_launch(folder: Path, device: str, worker_argv: list[str]) -> Launch:
    """Wrap `worker_argv` (a worker for untrusted code) in the isolation this machine offers.

    Creates `folder/tmp` and `folder/inputs`. The environment is scrubbed and the rlimits set
    whatever the level; under bwrap the worker also gets its namespaces."""
    (folder / "tmp").mkdir(exist_ok=True)
    (folder / "inputs").mkdir(exist_ok=True)
    limits = limits_for(device)
    found = detect()
    argv = list(worker_argv)
    if found.level == BWRAP:
        argv = bwrap_prefix(folder, device, bwrap=shutil.which("bwrap") or "bwrap") + argv
    return Launch(
        argv=argv,
        env=worker_env(folder, device),
        preexec_fn=functools.partial(apply_limits, limits),
        isolation=found.level,
    )


def read_init_pid(fd: int, timeout_s: float = 5.0) -> int | None:
    """The host pid of the sandbox's init (pid 1 of its pid namespace), from the JSON bubblewrap
    writes on `--info-fd` once the sandbox is set up; None when nothing came in `timeout_s`."""
    import json
    import select

    data = b""
    deadline = time.monotonic() + timeout_s
    while True:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
        try:
            return int(json.loads(data)["child-pid"])
        except (ValueError, KeyError):
            continue
    return None


def end_namespace(init_pid: int, started: str, timeout_s: float = 30.0) -> bool:
    """Kill the sandbox's init (the process `init_pid` that started at `started`) and wait until
    it is gone: its pid namespace dies with it, and the kernel has killed every process the
    candidate started. True when it went."""
    seen = process_start(init_pid)
    if seen is None or seen[1] != started:
        return True  # gone, and the pid may be another process's now: leave it alone
    try:
        os.kill(init_pid, 9)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        seen = process_start(init_pid)
        if seen is None or seen[1] != started or seen[0] in ("Z", "X"):
            return True  # a zombie has exited: it waits only to be reaped by its adopter
        time.sleep(0.02)
    return False


def stage_file(path: Path, folder: Path) -> Path:
    """A path to `path` the worker sandboxed in `folder` can read: the path itself when visible
    there, else a copy in `folder/inputs` (read-only inside the sandbox)."""
    if visible(path, folder):
        return path
    from benchmarks.formats.suite_imports import stage  # the file with the helpers it imports

    return stage(path, folder / "inputs")
