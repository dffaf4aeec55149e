"""Task integrity: a candidate cannot change what it is judged against.

The judge runs the task's reference and input factory from the module loaded in its own process.
A candidate that rewrote the task file (possible where the sandbox is off, and tried by hostile
candidates) would change what the *next* load of that task judges. So:

- `seal(task)`: the first time the judge sees a loaded task, it records the sha256 of its file
  and of the files it imports from the task's folder;
- `verify(task, when)` before and after every evaluation recomputes them: a change is a
  `harness_error` verdict ("the task file changed ..."), never a verdict against a changed task;
- `stage(task, folder)`: the worker never reads the task file itself but a private copy in its
  folder's `inputs/`, made read-only (and mounted read-only inside the sandbox); its hash is
  checked after the evaluation like the original's (`verify_copy`). The judge's own inputs come
  from its own loaded module, so a copy changed from inside shows up as inputs that differ from
  the judge's, or here.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from types import ModuleType

from benchmarks.task import Task

# (task file, id of its loaded module) -> ({path: sha256}, the module, kept so the id stays its)
_SEALS: dict[tuple[str, int], tuple[dict[str, str], ModuleType | None]] = {}


def _sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        return f"unreadable ({type(exc).__name__})"


def task_files(task: Task) -> list[Path]:
    """The task's file, the files its module imports from the task's folder, and the suite's
    helper modules it imports (`benchmarks.formats.suite_imports`)."""
    path = Path(task.path).resolve()
    files = [path, *(Path(h) for h in getattr(task, "helpers", ()))]
    module = task.module
    if module is None:
        return files
    for value in vars(module).values():
        mod = (
            value
            if isinstance(value, ModuleType)
            else sys.modules.get(getattr(value, "__module__", None) or "")
        )
        file = getattr(mod, "__file__", None)
        if not file:
            continue
        other = Path(file).resolve()
        if other != path and other.parent == path.parent and other not in files:
            files.append(other)
    return files


def _key(task: Task) -> tuple[str, int]:
    return str(Path(task.path).resolve()), id(task.module)


def seal(task: Task) -> dict[str, str]:
    """The hashes recorded for this loaded task (recorded now if this is the first time)."""
    key = _key(task)
    if key not in _SEALS:
        _SEALS[key] = ({str(p): _sha256(p) for p in task_files(task)}, task.module)
    return _SEALS[key][0]


def verify(task: Task, when: str) -> str | None:
    """Why the task's files no longer match their seal ("the task file ... changed `when`"),
    or None when they match."""
    for name, want in seal(task).items():
        got = _sha256(Path(name))
        if got != want:
            return (
                f"the task file {name} changed {when} (sha256 {want[:12]} -> {got[:12]}): "
                "nothing is judged against a changed task; restore it, or reload the task"
            )
    return None


def stage(task: Task, folder: Path) -> Path:
    """A private, read-only copy of the task file in `folder/inputs/`, for the worker, with the
    suite helper modules it imports at the same places relative to it."""
    from benchmarks.formats.suite_imports import stage as stage_with_helpers

    return stage_with_helpers(Path(task.path), folder / "inputs")


def verify_copy(task: Task, copy: Path) -> str | None:
    """Why the worker's copy of the task file no longer matches the task's seal, or None."""
    want = seal(task)[str(Path(task.path).resolve())]
    got = _sha256(copy)
    if got != want:
        return (
            f"the task file changed during the evaluation: the worker's copy {copy.name} now has "
            f"sha256 {got[:12]}, the task {want[:12]}"
        )
    return None
