"""Tasks: what a kernel must compute, on which inputs, and how it is judged.

A task is one Python file under `benchmarks/tasks/<category>/`. It declares, at module level:

    NAME         str, snake_case; the task id is f"{NAME}_{dtype}" for each of DTYPES
    CATEGORY     one of CATEGORIES (the folder it sits in must match)
    DESCRIPTION  prose: what is computed, with the formula and conventions
    ENTRY_POINT  the name of the reference function in this file; candidates define a function of
                 the same name and signature
    DTYPES       tuple of dtype names ("fp32", "fp16", "bf16", "int8", "fp8_e4m3"); one task each
    SHAPES       list of {"name", "dims": {str: int}, "weight": float, "phase": "prefill"|"decode"|"train",
                 "source": str}; the GPU shapes, each with its importance weight and where it
                 comes from (model and layer)
    CPU_SHAPES   list of {"name", "dims"}; small shapes for the CPU interpreter, with tail sizes
    TOLERANCE    {dtype: {"atol": float, "rtol": float[, "terms": float]}}, or for quantization
                 {"cosine": float, "rel_l1": float, "rmse": float, "why": str} (all required)
    FORBIDDEN    tuple of dotted API names a candidate may not use, on top of the global list
    MODES        optional tuple of extra input modes beyond "standard" and "outlier"
    BASELINE     optional name of a PyTorch function in this file (same signature) that the eager
                 and torch.compile baselines time instead of the reference, when the reference
                 is written for clarity rather than speed (e.g. fp64 emulation of an int8 GEMM)
    SPARSE_READS optional True when the op reads only part of an input (gather, paged KV)
    PEAK         optional "matmul" for tensor-core work outside matmul/attention/convolution
    ROOFLINE_DTYPE optional dtype name whose peak bounds the compute (e.g. "int8")

"terms" (optional, with an `error_terms` function below): the per-element bound becomes
atol + rtol * |want| + terms * error_terms(*inputs), where error_terms gives, for each output
element, the sum of the absolute values of the terms that make it up (for a dot product
sum |a_k| |b_k|: the reference run on absolute values). A sum that cancels (a small output made of
large terms, as outlier inputs produce) carries a rounding error proportional to that sum, not to
the output; `terms` is the relative error of one term at the precision the task allows (e.g. the
rounding of attention probabilities to bf16).

RMSE in a quantization contract is absolute, in the output's units: sqrt(mean((got - want)^2)).

and three functions:

    make_inputs(dims, dtype, mode, gen) -> tuple   seeded by the torch.Generator `gen`, created on
                                                   gen.device; the positional args of ENTRY_POINT
    flops(dims, dtype) -> float                    semantic FLOPs of one call
    min_bytes(dims, dtype) -> float                minimal DRAM bytes: each input read once, each
                                                   output written once

Loading a malformed task raises `TaskError`, which names the file and the field.
"""

from __future__ import annotations

import importlib.util
import inspect
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

CATEGORIES: tuple[str, ...] = (
    "activation",
    "math",
    "reduce",
    "scan",
    "normalization",
    "loss",
    "index",
    "pooling",
    "convolution",
    "spatial",
    "matmul",
    "linalg",
    "attention",
    "fusion",
    "quantization",
    "optimizer",
    "random",
)

DTYPE_NAMES: tuple[str, ...] = ("fp32", "fp16", "bf16", "int8", "fp8_e4m3")
PHASES: tuple[str, ...] = ("prefill", "decode", "train")
BASE_MODES: tuple[str, ...] = ("standard", "outlier")

TASKS_DIR = Path(__file__).resolve().parent / "tasks"


class TaskError(ValueError):
    """A task file that cannot be used, with the file and the field at fault."""

    def __init__(self, path: Path | str, field_name: str, problem: str) -> None:
        self.path = str(path)
        self.field = field_name
        self.problem = problem
        super().__init__(f"{path}: field {field_name}: {problem}")


class CandidateSetupError(RuntimeError):
    """A candidate that does not fit the task's contract before it is ever called (a ModelNew
    whose parameters are not the reference Model's). Raised in the candidate's process; the
    verdict's error class is parameter_mismatch."""


def torch_dtype(name: str) -> Any:
    """The torch dtype for one of DTYPE_NAMES."""
    import torch

    table = {
        "fp32": torch.float32,
        "fp16": torch.float16,
        "bf16": torch.bfloat16,
        "int8": torch.int8,
        "fp8_e4m3": torch.float8_e4m3fn,
    }
    if name not in table:
        raise ValueError(f"unknown dtype {name!r}; expected one of {', '.join(table)}")
    return table[name]


@dataclass(frozen=True)
class Shape:
    name: str
    dims: dict[str, int]
    weight: float = 1.0
    phase: str = "prefill"
    source: str = ""


@dataclass(frozen=True)
class Tolerance:
    """Per-dtype closeness (atol/rtol) or a quantization contract (all three required)."""

    atol: float | None = None
    rtol: float | None = None
    cosine: float | None = None
    rel_l1: float | None = None
    rmse: float | None = None
    why: str = ""
    terms: float = 0.0  # relative error allowed per |term| (see "terms" above)

    @property
    def is_quant(self) -> bool:
        return self.cosine is not None


@dataclass(frozen=True)
class Task:
    """One task at one dtype. Built by `load_task_file`; never constructed by hand.

    Tasks read from other benchmarks' files (`benchmarks.formats`) are subclasses that override
    the hooks below; the judge, the worker and the perf stage call only these."""

    # "function": the candidate defines a function named entry_point; "class": a class named
    # entry_point whose instances are called (KernelBench's ModelNew)
    entry_kind: ClassVar[str] = "function"
    # FLOPs and bytes are measured estimates (FlopCounterMode, input + output bytes), not formulas
    estimated_costs: ClassVar[bool] = False

    id: str
    name: str
    category: str
    description: str
    entry_point: str
    dtype: str
    shapes: tuple[Shape, ...]
    cpu_shapes: tuple[Shape, ...]
    tolerance: Tolerance
    forbidden: tuple[str, ...]
    modes: tuple[str, ...]
    path: Path
    dtypes: tuple[str, ...] = field(default=())  # all dtypes the file declares
    module: ModuleType | None = field(default=None, compare=False, repr=False)

    # -- the task's functions -------------------------------------------------------------
    @property
    def reference(self) -> Callable[..., Any]:
        return getattr(self._mod(), self.entry_point)

    def error_terms(self, args: tuple[Any, ...]) -> Any:
        """Sum of |terms| per output element (see "terms" in the module docstring), or None."""
        fn = getattr(self._mod(), "error_terms", None)
        if not self.tolerance.terms or fn is None:
            return None
        return fn(*args)

    def make_inputs(self, dims: dict[str, int], mode: str, gen: Any) -> tuple[Any, ...]:
        args = self._mod().make_inputs(dict(dims), torch_dtype(self.dtype), mode, gen)
        return tuple(args)

    def flops(self, dims: dict[str, int]) -> float:
        return float(self._mod().flops(dict(dims), torch_dtype(self.dtype)))

    def min_bytes(self, dims: dict[str, int]) -> float:
        return float(self._mod().min_bytes(dict(dims), torch_dtype(self.dtype)))

    def signature(self) -> inspect.Signature:
        return inspect.signature(self.reference)

    def reference_for(self, dims: dict[str, int]) -> Callable[..., Any]:
        """The reference to call on inputs made for `dims` (one function for native tasks)."""
        return self.reference

    def baseline_for(self, dims: dict[str, int]) -> Callable[..., Any]:
        """What the eager and torch.compile baselines time: BASELINE when the file names one."""
        return getattr(self._mod(), getattr(self._mod(), "BASELINE", None) or self.entry_point)

    def bind_candidate(self, entry: Any, dims: dict[str, int], device: str) -> Callable[..., Any]:
        """The callable the worker calls for `dims`, made from the candidate's entry point (the
        function itself for native tasks). Runs in the candidate's process."""
        return entry

    def peak_kind(self) -> str | None:
        """The compute peak that bounds the task ("matmul" or "vector") when it says, else None."""
        return getattr(self._mod(), "PEAK", None)

    def notes_for(self, device: str) -> list[str]:
        """Facts about how this task is run on `device` that a verdict must carry."""
        return []

    def shapes_for(self, device: str) -> tuple[Shape, ...]:
        return self.cpu_shapes if device == "cpu" else self.shapes

    def _mod(self) -> ModuleType:
        if self.module is None:  # pragma: no cover - load_task_file always sets it
            raise RuntimeError(f"task {self.id} has no module loaded")
        return self.module


# --------------------------------------------------------------------------------------------
# Loading and validation
# --------------------------------------------------------------------------------------------


def _import_file(path: Path) -> ModuleType:
    mod_name = f"kernforge_task_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise TaskError(path, "<file>", "cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(mod_name, None)
        raise TaskError(path, "<file>", f"syntax error at line {exc.lineno}: {exc.msg}") from exc
    except Exception as exc:
        sys.modules.pop(mod_name, None)
        raise TaskError(path, "<file>", f"import failed: {type(exc).__name__}: {exc}") from exc
    return module


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
    from benchmarks.formats import detect_format, load_external

    fmt = detect_format(path)
    if fmt != "native":
        return load_external(path, fmt)
    module = _import_file(path)

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
    close = [t for t in tasks if t.startswith(ref)]
    hint = (
        f" Did you mean: {', '.join(close[:8])}?"
        if close
        else " `kernforge tasks list` shows them."
    )
    raise KeyError(f"no task {ref!r}.{hint}")
