"""Native code in the candidate's process: only what Triton itself builds there.

A shared object loaded into the worker runs machine code no probe watches: it can compute an
output through a tensor's address and leave a Triton copy as the only launch anyone sees
(tests/hostile/calls_extension_module_native.py wrote a small CPython extension into its
temporary folder, loaded it through importlib, and passed past the static check; loading an
extension module raises no audit event, so the ctypes refusals never saw it). Once the probes
are installed (`install`, called by `probes.install`):

- **loading an extension module** (`_imp.create_dynamic`, under every importlib route) from a
  file the candidate could have written (a writable folder under the scratch roots or outside
  the Python installation, or no file at all: a memfd, a deleted file) is refused
  (`NativeLoadRefused`), unless the file's bytes are ones Triton built in this process;
- on a GPU, **Triton's C builds** (`triton.runtime.build._build`) run only for a source Triton's
  own launcher generator (`make_launcher` of its NVIDIA driver) returned in this process, with
  Triton's build knobs as they were, include and library folders the candidate cannot write, and
  the compiler's environment as it was at install (no `CPATH` or `GCC_EXEC_PREFIX` of the
  candidate's); the bytes built are what `create_dynamic` then accepts. A C compiler started any
  other way is refused (`probes._tool`): its options alone (`-wrapper`, `-fplugin`) run programs.
  The shared objects in the worker's Triton cache at install were built by the worker before the
  candidate existed (the judge's seeded cache carries no shared object: `worker._take_seeded_cache`).

Like the other probes this runs in the candidate's process: a candidate with native code already
running, or one that rewrites this module's state, is past it (docs/judge.md).
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable
from typing import Any

_trusted: set[str] = set()  # sha256 of shared objects Triton built in this process
_launcher_sources: set[str] = set()  # sha256 of the C sources Triton's launcher generator made
_building = [0]  # > 0 while a verified Triton build runs (a C compiler may start)
_environ: list[bytes] = []  # the environment at install, handed to the compiler
_sys_path: list[str] = []  # the import path at install (before the candidate could change it)
_cwd = [""]  # the working folder at install (the worker's own: never an install root)
refused: list[str] = []  # what was refused, for the verdict (a candidate may catch the error)
SHARED_SUFFIXES = (".so", ".pyd", ".dylib")


class NativeAccessRefused(BaseException):
    """Raised inside a candidate's call (or its import) that reaches memory by address through
    ctypes, or native code of its own: what it reads or runs that way no probe counts, so a
    Python computation over a tensor's `data_ptr()` would pass as a Triton kernel's. A
    BaseException, like `probes.ReadCapExceeded`; `probes` re-exports it."""


class NativeLoadRefused(NativeAccessRefused):
    """Raised where the candidate loads native code of its own, or asks Triton to build it."""


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_digest(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return _digest(f.read())
    except OSError:
        return None


def _install_roots() -> tuple[str, ...]:
    import site
    import sysconfig

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages()}
    roots |= {p for p in sysconfig.get_paths().values() if p}
    # where the packages were imported from (a venv on PYTHONPATH, as on the GPU machine), but
    # not the working folder
    roots |= {p for p in _sys_path if p and os.path.isabs(p) and os.path.realpath(p) != _cwd[0]}
    return tuple(sorted(os.path.realpath(r) for r in roots if r))


def _temp_roots() -> tuple[str, ...]:
    import tempfile

    roots = {"/tmp", "/dev/shm", "/var/tmp", tempfile.gettempdir()}
    return tuple(sorted(os.path.realpath(r) for r in roots))


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def writable_by_candidate(path: str) -> bool:
    """Whether the candidate could have written the file at `path` (or what it points to): its
    folder or the file itself writable, and outside the Python installation (its prefixes,
    site-packages and import path at install), or inside the worker's own folder; a path with no
    regular file behind it (a memfd, a deleted file) counts as written. Under bubblewrap
    everything but the worker's scratch is read-only; unisolated, a writable installation is
    trusted as installed (docs/judge.md)."""
    real = os.path.realpath(path)
    if os.path.isdir(real):  # a folder: whether files can be put into it
        writable = os.access(real, os.W_OK)
    elif os.path.isfile(real):
        writable = os.access(os.path.dirname(real), os.W_OK) or os.access(real, os.W_OK)
    else:
        return True
    if not writable:
        return False
    # the installation first (a virtual environment may sit under /tmp, as in a fresh clone
    # there), unless the worker's own folder is inside it
    if _under(real, _install_roots()) and not (_cwd[0] and _under(real, (_cwd[0],))):
        return False
    return True


def _refuse(what: str) -> NativeLoadRefused:
    refused.append(what)
    return NativeLoadRefused(
        f"native code of its own ({what}): machine code in the candidate's process computes "
        "where no probe sees it, so a candidate may load only what Triton builds"
    )


def _loader_guard(original: Any) -> Any:
    """`_imp.create_dynamic` (every importlib route to an extension module) refusing a file the
    candidate could have written, unless Triton built those bytes here."""

    def create_dynamic(spec: Any, *args: Any, **kwargs: Any) -> Any:
        origin = getattr(spec, "origin", None)
        path = os.fsdecode(origin) if isinstance(origin, str | bytes) else ""
        if not path or writable_by_candidate(path):
            if not path or _file_digest(os.path.realpath(path)) not in _trusted:
                raise _refuse(f"an extension module from {path[:100] or '?'}")
        return original(spec, *args, **kwargs)

    create_dynamic.__name__ = "create_dynamic"
    return create_dynamic


def _launcher_guard(original: Any) -> Any:
    """Triton's launcher generator: the sources it returns are the ones `_build` may compile."""

    def make_launcher(*args: Any, **kwargs: Any) -> Any:
        src = original(*args, **kwargs)
        if isinstance(src, str):
            _launcher_sources.add(_digest(src.encode()))
        return src

    make_launcher.__name__ = "make_launcher"
    return make_launcher


def _build_guard(
    original: Any, knobs_state: Callable[[], Any], before: Any, beside: Callable[[], list[str]]
) -> Any:
    """`triton.runtime.build._build(name, src_path, srcdir, library_dirs, include_dirs, ...)`
    only for a source Triton's launcher generator made, its folders and knobs untouched, with no
    thread of the candidate's alive (`beside`: one could rewrite the source between this check
    and the compiler), and the source the same bytes once built."""

    def build(name: Any, src: Any, srcdir: Any, *args: Any, **kwargs: Any) -> Any:
        text = _file_digest(os.fsdecode(src)) if isinstance(src, str | bytes) else None
        if text is None or text not in _launcher_sources:
            raise _refuse(f"a C build of {str(src)[:80]}, a source Triton did not generate")
        alive = beside()
        if alive:
            raise _refuse(
                f"a C build with threads it started running beside it ({', '.join(alive[:3])})"
            )
        if knobs_state() != before:
            raise _refuse("a C build with Triton's build knobs changed")
        folders = [a for a in args[:2] if isinstance(a, list | tuple)]
        for folder in (f for group in folders for f in group):
            if isinstance(folder, str) and os.path.isdir(folder) and writable_by_candidate(folder):
                raise _refuse(f"a C build reading {folder[:80]}, a folder it can write")
        _building[0] += 1
        try:
            so = original(name, src, srcdir, *args, **kwargs)
        finally:
            _building[0] -= 1
        if _file_digest(os.fsdecode(src)) != text:
            raise _refuse(f"a C build of {str(src)[:80]}, whose source changed while it compiled")
        made = _file_digest(os.fsdecode(so)) if isinstance(so, str | bytes) else None
        if made is not None:
            _trusted.add(made)
        return so

    build.__name__ = "_build"
    return build


def building() -> bool:
    """Whether a verified Triton build is running (a C compiler may start)."""
    return _building[0] > 0


def compiler_environment() -> list[bytes]:
    """The environment a C compiler Triton starts gets: the worker's at install."""
    return list(_environ)


def trust_cache(folder: str | None) -> None:
    """Trust the shared objects now in the worker's Triton cache (built by the worker itself
    before the candidate existed)."""
    if not folder or not os.path.isdir(folder):
        return
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith(SHARED_SUFFIXES):
                digest = _file_digest(os.path.join(root, name))
                if digest is not None:
                    _trusted.add(digest)


def install(
    compiles: bool,
    protect: Callable[[Any, list[str]], None],
    beside: Callable[[], list[str]],
) -> None:
    """Guard extension loading, and on a GPU Triton's C builds (module docstring); `beside`
    names the candidate's threads that may be running (`probes.threads_beside`)."""
    import _imp

    try:  # imported before the guard (Triton's own extension loads from the installation)
        from triton import knobs
        from triton.backends.nvidia import driver
        from triton.runtime import build as triton_build
    except Exception:  # noqa: BLE001 - no NVIDIA backend here: nothing is built
        knobs = driver = triton_build = None
    _environ[:] = [f"{k}={v}".encode() for k, v in os.environ.items()]
    _cwd[0] = os.path.realpath(os.getcwd())
    _sys_path[:] = [
        p
        for p in sys.path
        if isinstance(p, str) and not _under(os.path.realpath(p or "."), (_cwd[0], *_temp_roots()))
    ]
    trust_cache(os.environ.get("TRITON_CACHE_DIR"))
    _imp.create_dynamic = _loader_guard(_imp.create_dynamic)
    protect(_imp, ["create_dynamic"])
    if not compiles or driver is None:
        return

    def knobs_state() -> Any:
        b = getattr(knobs, "build", None)
        return (getattr(b, "impl", None), tuple(getattr(b, "backend_dirs", None) or ()))

    if hasattr(driver, "make_launcher"):
        driver.make_launcher = _launcher_guard(driver.make_launcher)
        protect(driver, ["make_launcher"])
    if hasattr(triton_build, "_build"):
        triton_build._build = _build_guard(triton_build._build, knobs_state, knobs_state(), beside)
        protect(triton_build, ["_build"])


__all__ = [
    "NativeLoadRefused",
    "building",
    "compiler_environment",
    "install",
    "refused",
    "trust_cache",
    "writable_by_candidate",
]
