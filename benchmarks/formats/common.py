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
from benchmarks.inputs import maybe_outliers
from benchmarks.task import Task, Tolerance

# KernelBench's own correctness criterion (torch.allclose with atol = rtol = 1e-2), used for
# both formats: their references run eagerly on GPUs where cuDNN and matmul may use TF32, and
# native tasks' tighter per-op tolerances do not transfer to arbitrary imported problems.
EXTERNAL_TOLERANCE: dict[str, Tolerance] = {
    "fp32": Tolerance(atol=1e-2, rtol=1e-2),
    "fp16": Tolerance(atol=1e-2, rtol=1e-2),
    "bf16": Tolerance(atol=2e-2, rtol=2e-2),
}
# Inputs the CPU interpreter gets per call, in elements (all input tensors together).
CPU_ELEMENT_BUDGET = 1 << 16
COST_NOTE = (
    "FLOPs and bytes are estimated: FLOPs counted by torch.utils.flop_counter.FlopCounterMode on "
    "the reference (it counts matmul, convolution and attention only), bytes = every input and "
    "output tensor (and a KernelBench Model's weights) once"
)
_DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}


def dtype_name(values: Any) -> str:
    """The task dtype: that of the first floating-point tensor among `values` ("fp32" if none,
    or if it is a dtype the judge has no tolerance for, such as float64)."""
    for t in tensors(values):
        if t.is_floating_point():
            return _DTYPE_NAMES.get(t.dtype, "fp32")
    return "fp32"


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


def with_outliers(args: tuple, mode: str, gen: torch.Generator) -> tuple:
    """Native tasks' outlier mode on imported inputs: in "outlier" mode a sparse random subset
    of every floating-point tensor is amplified 10-1000x (`benchmarks.inputs`)."""
    if mode == "standard":
        return args
    return map_tensors(args, lambda t: maybe_outliers(t, mode, gen) if t.is_floating_point() else t)


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
        return [COST_NOTE, *self.load_notes, *(self.cpu_notes if device == "cpu" else ())]
