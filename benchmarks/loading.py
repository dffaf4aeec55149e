"""Loading tasks: a task file checked field by field, a folder of files, the built-in suite.

`load_task_file` reads one file of any format: kernforge's own (the fields the docstring of
`benchmarks.task` lists, each validated with a `TaskError` that names the file and the field), or
a KernelBench / TritonBench problem, which `benchmarks.formats` recognises and reads.
`load_folder` reads a folder of such files as a suite, file by file (a file that fails is listed
with its reason); `load_all` and `get_task` the built-in tasks under benchmarks/tasks/.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.formats import detect_format, load_external
from benchmarks.suggest import unknown_name
from benchmarks.task import (
    BASE_MODES,
    CATEGORIES,
    DTYPE_NAMES,
    PHASES,
    Shape,
    Task,
    TaskError,
    Tolerance,
    import_file,
    torch_dtype,
)

TASKS_DIR = Path(__file__).resolve().parent / "tasks"


def _require(module: ModuleType, path: Path, name: str, kind: type | tuple[type, ...]) -> Any:
    if not hasattr(module, name):
        raise TaskError(path, name, "missing")
    value = getattr(module, name)
    if not isinstance(value, kind):
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise TaskError(path, name, f"must be {want}, got {type(value).__name__}")
    return value


def _parse_shape(raw: Any, path: Path, fld: str, gpu: bool) -> Shape:
    if not isinstance(raw, dict):
        raise TaskError(path, fld, f"must be a dict, got {type(raw).__name__}")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise TaskError(path, f"{fld}.name", "must be a non-empty string")
    dims = raw.get("dims")
    if not isinstance(dims, dict) or not dims:
        raise TaskError(path, f"{fld}.dims", "must be a non-empty dict of str -> int")
    for key, val in dims.items():
        if not isinstance(key, str) or isinstance(val, bool) or not isinstance(val, int) or val < 0:
            raise TaskError(path, f"{fld}.dims.{key}", f"must be a non-negative int, got {val!r}")
    weight = raw.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not weight > 0:
        raise TaskError(path, f"{fld}.weight", f"must be a positive number, got {weight!r}")
    phase = raw.get("phase", "prefill")
    if phase not in PHASES:
        raise TaskError(path, f"{fld}.phase", f"must be one of {PHASES}, got {phase!r}")
    source = raw.get("source", "")
    if gpu and (not isinstance(source, str) or not source.strip()):
        raise TaskError(path, f"{fld}.source", "must say where the shape comes from")
    return Shape(name=name, dims=dict(dims), weight=float(weight), phase=phase, source=source)


def _parse_shapes(module: ModuleType, path: Path, name: str, gpu: bool) -> tuple[Shape, ...]:
    raw = _require(module, path, name, (list, tuple))
    if not raw:
        raise TaskError(path, name, "must list at least one shape")
    shapes = tuple(_parse_shape(r, path, f"{name}[{i}]", gpu) for i, r in enumerate(raw))
    names = [s.name for s in shapes]
    if len(set(names)) != len(names):
        raise TaskError(path, name, f"shape names must be unique, got {names}")
    return shapes


def _parse_tolerance(
    module: ModuleType, path: Path, dtypes: tuple[str, ...]
) -> dict[str, Tolerance]:
    raw = _require(module, path, "TOLERANCE", dict)
    quant_keys = {"cosine", "rel_l1", "rmse"}
    if quant_keys & set(raw):
        missing = sorted(quant_keys - set(raw))
        if missing:
            raise TaskError(
                path,
                "TOLERANCE",
                f"quantization contract needs all of cosine, rel_l1, rmse; missing {missing}",
            )
        for key in quant_keys:
            if isinstance(raw[key], bool) or not isinstance(raw[key], int | float):
                raise TaskError(path, f"TOLERANCE.{key}", "must be a number")
        if not 0 < raw["cosine"] <= 1:
            raise TaskError(path, "TOLERANCE.cosine", "must be in (0, 1]")
        why = raw.get("why", "")
        if not isinstance(why, str) or not why.strip():
            raise TaskError(
                path, "TOLERANCE.why", "a quantization contract must justify its thresholds"
            )
        tol = Tolerance(
            cosine=float(raw["cosine"]),
            rel_l1=float(raw["rel_l1"]),
            rmse=float(raw["rmse"]),
            why=why,
        )
        return {d: tol for d in dtypes}
    out = {}
    for dtype in dtypes:
        entry = raw.get(dtype)
        if not isinstance(entry, dict):
            raise TaskError(
                path,
                f"TOLERANCE.{dtype}",
                "missing (need {'atol': .., 'rtol': ..} for every dtype)",
            )
        for key in ("atol", "rtol", "terms"):
            val = entry.get(key, 0.0 if key == "terms" else None)
            if isinstance(val, bool) or not isinstance(val, int | float) or val < 0:
                raise TaskError(
                    path, f"TOLERANCE.{dtype}.{key}", f"must be a non-negative number, got {val!r}"
                )
        terms = float(entry.get("terms", 0.0))
        if terms and not callable(getattr(module, "error_terms", None)):
            raise TaskError(
                path,
                f"TOLERANCE.{dtype}.terms",
                "needs a function error_terms(*inputs) in the task file",
            )
        out[dtype] = Tolerance(atol=float(entry["atol"]), rtol=float(entry["rtol"]), terms=terms)
    return out


def load_task_file(path: Path | str) -> list[Task]:
    """Load and validate one task file; one Task per declared dtype.

    KernelBench and TritonBench files are recognised and read by `benchmarks.formats`."""
    path = Path(path).resolve()
    if not path.is_file():
        raise TaskError(path, "<file>", "no such file")
    fmt = detect_format(path)
    if fmt != "native":
        return load_external(path, fmt)
    module = import_file(path)

    name = _require(module, path, "NAME", str)
    if not name.isidentifier() or name != name.lower():
        raise TaskError(path, "NAME", f"must be a lower-case identifier, got {name!r}")
    category = _require(module, path, "CATEGORY", str)
    if category not in CATEGORIES:
        raise TaskError(
            path, "CATEGORY", f"must be one of {', '.join(CATEGORIES)}, got {category!r}"
        )
    if path.parent.parent == TASKS_DIR and path.parent.name != category:
        raise TaskError(
            path, "CATEGORY", f"is {category!r} but the file sits in {path.parent.name}/"
        )
    description = _require(module, path, "DESCRIPTION", str)
    if len(description.strip()) < 20:
        raise TaskError(path, "DESCRIPTION", "must describe the computation (at least a sentence)")
    entry_point = _require(module, path, "ENTRY_POINT", str)
    ref = getattr(module, entry_point, None)
    if not callable(ref):
        raise TaskError(
            path,
            "ENTRY_POINT",
            f"names {entry_point!r}, which the file does not define as a function",
        )
    dtypes = tuple(_require(module, path, "DTYPES", (list, tuple)))
    if not dtypes:
        raise TaskError(path, "DTYPES", "must list at least one dtype")
    for d in dtypes:
        if d not in DTYPE_NAMES:
            raise TaskError(path, "DTYPES", f"unknown dtype {d!r}; expected some of {DTYPE_NAMES}")
    shapes = _parse_shapes(module, path, "SHAPES", gpu=True)
    cpu_shapes = _parse_shapes(module, path, "CPU_SHAPES", gpu=False)
    tolerances = _parse_tolerance(module, path, dtypes)
    forbidden = tuple(_require(module, path, "FORBIDDEN", (list, tuple)))
    for f in forbidden:
        if not isinstance(f, str) or not f:
            raise TaskError(path, "FORBIDDEN", f"entries must be dotted API names, got {f!r}")
    extra_modes = tuple(getattr(module, "MODES", ()))
    for fn_name, arity in (("make_inputs", 4), ("flops", 2), ("min_bytes", 2)):
        fn = getattr(module, fn_name, None)
        if not callable(fn):
            raise TaskError(path, fn_name, "missing function")
        n_params = len(inspect.signature(fn).parameters)
        if n_params != arity:
            raise TaskError(path, fn_name, f"must take {arity} arguments, takes {n_params}")
    for shape in shapes:
        for fn_name in ("flops", "min_bytes"):
            try:
                val = getattr(module, fn_name)(dict(shape.dims), torch_dtype(dtypes[0]))
            except Exception as exc:
                raise TaskError(
                    path, fn_name, f"fails on shape {shape.name}: {type(exc).__name__}: {exc}"
                ) from exc
            if (
                isinstance(val, bool)
                or not isinstance(val, int | float)
                or not math.isfinite(val)
                or val < 0
            ):
                raise TaskError(
                    path,
                    fn_name,
                    f"must return a non-negative number for shape {shape.name}, got {val!r}",
                )

    return [
        Task(
            id=f"{name}_{dtype}",
            name=name,
            category=category,
            description=description.strip(),
            entry_point=entry_point,
            dtype=dtype,
            shapes=shapes,
            cpu_shapes=cpu_shapes,
            tolerance=tolerances[dtype],
            forbidden=forbidden,
            modes=BASE_MODES + tuple(m for m in extra_modes if m not in BASE_MODES),
            path=path,
            dtypes=dtypes,
            module=module,
        )
        for dtype in dtypes
    ]


def task_files(root: Path = TASKS_DIR) -> list[Path]:
    return sorted(p for p in root.glob("*/*.py") if not p.name.startswith("_"))


def load_all(root: Path = TASKS_DIR) -> dict[str, Task]:
    """Every task under `root`, keyed by id. A malformed file raises TaskError."""
    tasks: dict[str, Task] = {}
    for path in task_files(root):
        for task in load_task_file(path):
            if task.id in tasks:
                raise TaskError(
                    path, "NAME", f"task id {task.id} is also declared by {tasks[task.id].path}"
                )
            tasks[task.id] = task
    return tasks


def get_task(ref: str, root: Path = TASKS_DIR) -> Task:
    """A task by id (e.g. "softmax_fp16"), or by file path when it has exactly one dtype
    (a path with several dtypes needs the suffix: "path/to/task.py:fp16")."""
    path_part, _, dtype = (
        ref.partition(":") if ref.endswith(DTYPE_NAMES) and ":" in ref else (ref, "", "")
    )
    if path_part.endswith(".py"):
        variants = load_task_file(path_part)
        if dtype:
            for t in variants:
                if t.dtype == dtype:
                    return t
            raise KeyError(
                f"{path_part} declares no dtype {dtype}; it has {[t.dtype for t in variants]}"
            )
        if len(variants) > 1:
            raise KeyError(
                f"{path_part} declares several dtypes; say which: {path_part}:{variants[0].dtype}"
            )
        return variants[0]
    tasks = load_all(root)
    if ref in tasks:
        return tasks[ref]
    raise KeyError(unknown_name("task", ref, tasks, "`kernforge tasks list` shows them"))


@dataclass
class NotLoaded:
    """A file of a folder suite that did not load, and why (one line)."""

    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class FolderSuite:
    """A folder of task files loaded file by file: the tasks, and the files that did not load."""

    folder: Path
    tasks: list[Task] = field(default_factory=list)
    not_loaded: list[NotLoaded] = field(default_factory=list)
    helpers: list[Path] = field(default_factory=list)  # the suite's helper modules, not tasks


def suite_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """(task files, helper modules) of a folder suite: every `*.py` under it (recursively; names
    starting with `_` or `.` skipped), less the modules its files import as helpers (KernelBench-X's
    `utils/data_utils.py`, `benchmarks.formats.suite_imports`)."""
    from benchmarks.formats.suite_imports import helper_files, helpers_of

    files = sorted(
        p
        for p in folder.rglob("*.py")
        if not any(part.startswith(("_", ".")) for part in p.relative_to(folder).parts)
    )
    helpers: set[Path] = set()
    for path in files:
        try:
            helpers.update(helper_files(helpers_of(path)))
        except ValueError:
            continue  # a file whose imports reach too far: it fails to load, with that reason
    return [p for p in files if p.resolve() not in helpers], sorted(helpers)


def load_folder(folder: Path | str) -> FolderSuite:
    """Every task file under `folder`, each loaded on its own: one that fails is listed with its
    reason and the others still load. Raises TaskError only for a folder with no task files."""
    folder = Path(folder)
    files, helpers = suite_files(folder)
    suite = FolderSuite(folder, helpers=helpers)
    seen: dict[str, Path] = {}
    for path in files:
        try:
            loaded = load_task_file(path)
        except TaskError as exc:
            suite.not_loaded.append(NotLoaded(path, f"field {exc.field}: {exc.problem}"))
            continue
        except Exception as exc:  # noqa: BLE001 - one broken file must not end the suite
            suite.not_loaded.append(NotLoaded(path, f"{type(exc).__name__}: {str(exc)[:300]}"))
            continue
        for task in loaded:
            if task.id in seen:
                suite.not_loaded.append(
                    NotLoaded(path, f"task id {task.id} is also declared by {seen[task.id]}")
                )
                continue
            seen[task.id] = path
            suite.tasks.append(task)
    if not files:
        raise TaskError(folder, "<folder>", "holds no task files (*.py)")
    return suite


def folder_tasks(folder: Path | str) -> list[Task]:
    """The tasks of the files under `folder` that load (see `load_folder`), in path order."""
    return load_folder(folder).tasks
