"""What the imported formats share: the Task subclass, tolerances, seeding, tensor plumbing and
the estimated costs (FLOPs from `torch.utils.flop_counter.FlopCounterMode`, bytes = every input
and output tensor once)."""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import torch

from benchmarks import pyparse
from benchmarks.inputs import amplify_outliers, in_range_outliers, signed
from benchmarks.task import Task, Tolerance

# KernelBench's own correctness criterion (torch.allclose with atol = rtol = 1e-2), used for
# both formats: their references run eagerly on GPUs where cuDNN and matmul may use TF32, and
# native tasks' tighter per-op tolerances do not transfer to arbitrary imported problems.
EXTERNAL_TOLERANCE: dict[str, Tolerance] = {
    "fp32": Tolerance(atol=1e-2, rtol=1e-2),
    "fp16": Tolerance(atol=1e-2, rtol=1e-2),
    "bf16": Tolerance(atol=2e-2, rtol=2e-2),
}
SIGNED_MODE = "signed"  # one-sided published inputs with half their signs flipped
OUTLIER_KINDS = ("amplify", "in_range")
COST_NOTE = (
    "FLOPs and bytes are estimated: FLOPs counted by torch.utils.flop_counter.FlopCounterMode on "
    "the reference (it counts matmul, convolution and attention only), bytes = every input and "
    "output tensor (and a KernelBench Model's weights) once"
)
_DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}


def dtype_name(values: Any) -> str:
    """The task dtype: that of the first floating-point tensor among `values` ("fp32" if none,
    or if it is a dtype the judge has no tolerance for, such as float64: compared at fp32's)."""
    for t in tensors(values):
        if t.is_floating_point():
            return _DTYPE_NAMES.get(t.dtype, "fp32")
    return "fp32"


def dtype_notes(values: Any) -> list[str]:
    """What the dtype of the inputs means for judging them (float64 compared at fp32's tolerance)."""
    wide = sorted({str(t.dtype) for t in tensors(values) if t.dtype == torch.float64})
    return [f"{', '.join(wide)} inputs: compared with the fp32 tolerance"] if wide else []


def tensors(value: Any) -> Iterator[torch.Tensor]:
    """Every tensor in a value, descending into tuples, lists and dict values."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, tuple | list):
        for v in value:
            yield from tensors(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from tensors(v)


def map_tensors(value: Any, fn: Callable[[torch.Tensor], Any]) -> Any:
    """`value` with `fn` applied to every tensor in it (tuples and lists keep their type)."""
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, tuple | list):
        return type(value)(map_tensors(v, fn) for v in value)
    return value


def numel(value: Any) -> int:
    return sum(t.numel() for t in tensors(value))


def nbytes(value: Any) -> int:
    return sum(t.numel() * t.element_size() for t in tensors(value))


def with_mode(args: tuple, mode: str, gen: torch.Generator, outlier_kind: str = "amplify") -> tuple:
    """Imported inputs in an input mode (`benchmarks.inputs`): "standard" as published;
    "outlier" with a sparse random subset of every floating-point or complex tensor amplified
    10-1000x ("amplify") or, for a reference defined on its inputs' range only, moved to the ends
    of that range ("in_range"); "signed" with one-sided tensors' signs half flipped."""
    if mode == "standard":
        return args
    if mode == "outlier":
        outlier = amplify_outliers if outlier_kind == "amplify" else in_range_outliers
        return map_tensors(
            args, lambda t: outlier(t, gen) if t.is_floating_point() or t.is_complex() else t
        )
    if mode == SIGNED_MODE:
        return map_tensors(args, lambda t: signed(t, gen))
    raise ValueError(f"unknown input mode {mode!r} for an imported task")


@contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Seed torch's global generators (the files draw with torch.randn and no generator) and
    restore them afterwards, so loading a task does not change the caller's random stream."""
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


def device_of(args: tuple) -> torch.device:
    return next((t.device for t in tensors(args)), torch.device("cpu"))


def exec_module(tree: ast.Module, path: Path, name: str) -> ModuleType:
    """Run a (possibly rewritten) syntax tree of a task file as module `name`; errors propagate."""
    module = ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    try:
        exec(pyparse.compile_tree(tree, str(path)), module.__dict__)  # noqa: S102 - the task file is trusted
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def measure_costs(call: Callable[[], Any], inputs: Any) -> tuple[float, float]:
    """(FLOPs, bytes) of one reference call: FlopCounterMode's count, inputs + outputs bytes."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter, torch.no_grad():
        out = call()
    return float(counter.get_total_flops()), float(nbytes(inputs) + nbytes(out))


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:500]}"


@dataclass(frozen=True)
class ExternalTask(Task):
    """A task read from another benchmark's file. Costs are measured, not declared, and cached
    per shape; `notes_for` tells the verdict so (and, on the CPU, what was shrunk)."""

    fmt: str = ""
    load_notes: tuple[str, ...] = ()  # what loading left out or changed, on every device
    cpu_notes: tuple[str, ...] = ()  # what the CPU interpreter runs differently (shrunk sizes)
    flagged: tuple[str, ...] = ()  # why no kernel can pass it (Task.cannot_pass)
    cpu_refusal: str | None = None  # why the CPU interpreter does not judge it (GPU only)
    outlier_kind: str = "amplify"  # how "outlier" mode draws (OUTLIER_KINDS)
    suite_root: Path | None = None  # the folder its suite-relative imports resolve under
    helpers: tuple[Path, ...] = ()  # the helper files it imports from its suite (absolute)
    cache: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    estimated_costs: ClassVar[bool] = True

    def flops(self, dims: dict[str, int]) -> float:
        return self._costs(dims)[0]

    def min_bytes(self, dims: dict[str, int]) -> float:
        return self._costs(dims)[1]

    def _costs(self, dims: dict[str, int]) -> tuple[float, float]:
        key = ("costs", tuple(sorted(dims.items())))
        if key not in self.cache:
            self.cache[key] = self.measure_costs(dims)
        return self.cache[key]

    def measure_costs(self, dims: dict[str, int]) -> tuple[float, float]:  # pragma: no cover
        raise NotImplementedError

    def peak_kind(self) -> str | None:
        """FlopCounterMode counts only matmul, convolution and attention: work it counts runs
        on tensor cores, so the matmul peak bounds it; otherwise the vector peak."""
        return "matmul" if self.flops(self.shapes[0].dims) > 0 else "vector"

    def notes_for(self, device: str) -> list[str]:
        flagged = [f"no kernel can pass this task: {why}" for why in self.flagged]
        cpu = self.cpu_notes if device == "cpu" else ()
        return [COST_NOTE, *flagged, *self.load_notes, *cpu]

    def cannot_pass(self) -> tuple[str, ...]:
        return self.flagged

    def refusal(self, device: str) -> str | None:
        return self.cpu_refusal if device == "cpu" else None
