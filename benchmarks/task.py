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
    MOVES_DATA   optional True when the task's whole job is moving data (pixel shuffle, roll, pad,
                 nearest upsampling, gathers): PyTorch copies of a sizeable share of the output
                 then count as a fallback (benchmarks/harness/calls.py, COPIED_SHARE)
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
    # the dims are sizes the judge may draw other values of (benchmarks/harness/shapes.py); False
    # where they are not (an index into recorded calls)
    shape_dims_vary: ClassVar[bool] = True

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
    def moves_data(self) -> bool:
        """The task's whole job is moving data (its file's MOVES_DATA)."""
        return self.module is not None and getattr(self.module, "MOVES_DATA", False) is True

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
        """The parameters of the candidate's entry point (the reference's own, for native tasks)."""
        return inspect.signature(self.reference)

    def entry_reference(self) -> Callable[..., Any]:
        """The reference as a function of `signature()`'s parameters, called as the candidate's
        entry point is (`entry_call`); `reference` may instead take the inputs as one flat tuple."""
        return self.reference

    def entry_call(
        self, dims: dict[str, int], args: tuple[Any, ...]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Inputs made for `dims` as the judge passes them to the candidate's entry point: (by
        position, by keyword). Native tasks pass every input by position."""
        return tuple(args), {}

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

    def output_args(self, dims: dict[str, int]) -> tuple[int, ...]:
        """Positions of the inputs that are output buffers the entry point writes (an `out=`
        argument): the judge compares them as outputs and does not count writing them as a
        mutation. Empty for native tasks, whose inputs are read-only."""
        return ()

    def cannot_pass(self) -> tuple[str, ...]:
        """Why no kernel can pass this task, found when it was loaded (a random reference, a
        result that is no tensor, ...): such tasks are listed, flagged and kept out of pass
        rates. Empty for a task any correct kernel passes."""
        return ()

    def refusal(self, device: str) -> str | None:
        """Why the judge does not run this task on `device` at all (None: it does), said before
        anything runs, e.g. a problem too large for the CPU interpreter even shrunk."""
        return None

    def shapes_for(self, device: str) -> tuple[Shape, ...]:
        return self.cpu_shapes if device == "cpu" else self.shapes

    def _mod(self) -> ModuleType:
        if self.module is None:  # pragma: no cover - load_task_file always sets it
            raise RuntimeError(f"task {self.id} has no module loaded")
        return self.module


def import_file(path: Path) -> ModuleType:
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
