"""KernelBench-style problem files as tasks.

A KernelBench problem file defines

    class Model(nn.Module)      the reference: __init__(*get_init_inputs()), forward(*get_inputs())
    def get_inputs()            the forward inputs, drawn with torch.randn & co. (no generator)
    def get_init_inputs()       the constructor arguments (sizes, flags, ...)

and sizes them with module-level integer constants. The candidate defines `class ModelNew`
with the same constructor and forward arguments, computing forward with Triton kernels.

How the judge runs one (see docs/formats.md):
- inputs: `torch.manual_seed(trial seed)` then `get_inputs()`, moved to the device; in "outlier"
  mode a sparse subset of every floating-point input is amplified 10-1000x (or kept in range,
  and "signed" mode added: `benchmarks.formats.checks`);
- reference: `Model(*get_init_inputs())` built after `torch.manual_seed(MODEL_SEED)`, moved to
  the device, called under `torch.no_grad()` (train mode, as KernelBench runs it);
- candidate (in its own process): `ModelNew(*get_init_inputs())` built after the same seed,
  then Model's state_dict loaded into it (strict: parameter and buffer names and shapes must be
  Model's, or the verdict is `parameter_mismatch`), moved to the device, called likewise;
- dims: the integers that size what get_inputs / get_init_inputs build (`benchmarks.formats.
  shrink`); on the CPU they are shrunk, probed and repaired (`benchmarks.formats.cpu_sizes`) and
  the verdict says from what to what, or the task is refused on the CPU up front;
- costs: FlopCounterMode on the reference (on the meta device); bytes = inputs, outputs and the
  Model's parameters and buffers, each once.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import torch

from benchmarks import pyparse
from benchmarks.formats import checks, cpu_sizes
from benchmarks.formats.common import (
    EXTERNAL_TOLERANCE,
    ExternalTask,
    device_of,
    dtype_name,
    dtype_notes,
    error_text,
    exec_module,
    map_tensors,
    measure_costs,
    numel,
    seeded,
    tensors,
    with_mode,
)
from benchmarks.formats.devices import to_cpu
from benchmarks.formats.shrink import names_read, size_constants, with_sizes
from benchmarks.task import BASE_MODES, CandidateSetupError, Shape, TaskError

MODEL_SEED = 0  # torch.manual_seed before Model(...) and ModelNew(...) are built
ROOTS = ("get_inputs", "get_init_inputs")
REQUIRED = {
    "Model": "class Model(nn.Module), the reference",
    "get_inputs": "def get_inputs(), the list of forward inputs",
    "get_init_inputs": "def get_init_inputs(), the list of constructor arguments",
}


def _key(dims: dict[str, int]) -> tuple:
    return tuple(sorted(dims.items()))


def _variant(path: Path, tree: ast.Module, dims: dict[str, int], cache: dict) -> ModuleType:
    """The file run with its sizes set to `dims` (cached)."""
    key = ("module", _key(dims))
    if key not in cache:
        digest = hashlib.sha256(f"{path}|{_key(dims)}".encode()).hexdigest()[:12]
        sized = with_sizes(tree, dims)
        if not torch.cuda.is_available():
            sized = to_cpu(sized)  # a `.cuda()` or device="cuda" in the file: the CPU's
        cache[key] = exec_module(sized, path, f"kernforge_kernelbench_{digest}")
    return cache[key]


def _inputs(module: ModuleType, path: Path, fn_name: str, seed: int, note: str = "") -> tuple:
    """`get_inputs()` or `get_init_inputs()` under `seed`, as a tuple; TaskError when it fails."""
    where = f" (with sizes shrunk for the CPU interpreter: {note})" if note else ""
    try:
        with seeded(seed):
            values = getattr(module, fn_name)()
    except Exception as exc:
        raise TaskError(path, fn_name, f"raised {error_text(exc)}{where}") from exc
    if not isinstance(values, list | tuple):
        raise TaskError(path, fn_name, f"must return a list or tuple, got {type(values).__name__}")
    return tuple(values)


@dataclass(frozen=True)
class KernelBenchTask(ExternalTask):
    tree: ast.Module | None = field(default=None, compare=False, repr=False)

    entry_kind: ClassVar[str] = "class"

    def variant(self, dims: dict[str, int]) -> ModuleType:
        assert self.tree is not None
        return _variant(self.path, self.tree, dims, self.cache)

    @property
    def reference(self) -> Callable[..., Any]:
        """The reference at the file's own sizes."""
        return self.reference_for(self.shapes[0].dims)

    def signature(self) -> inspect.Signature:
        """Model.forward's, without self."""
        sig = inspect.signature(self.variant(self.shapes[0].dims).Model.forward)
        return sig.replace(parameters=list(sig.parameters.values())[1:])

    def build(self, cls: type, dims: dict[str, int]) -> Any:
        """`cls(*get_init_inputs())` after torch.manual_seed(MODEL_SEED), on the CPU."""
        init = _inputs(self.variant(dims), self.path, "get_init_inputs", MODEL_SEED)
        with seeded(MODEL_SEED):
            return cls(*init)

    def model(self, dims: dict[str, int], device: torch.device | str) -> torch.nn.Module:
        """The trusted reference Model for `dims` on `device` (built once per process)."""
        key = ("model", _key(dims), str(torch.device(device)))
        if key not in self.cache:
            self.cache[key] = (
                self.build(self.variant(dims).Model, dims).to(device).requires_grad_(False)
            )
        return self.cache[key]

    def reference_for(self, dims: dict[str, int]) -> Callable[..., Any]:
        def reference(*args: Any) -> Any:
            model = self.model(dims, device_of(args))
            with torch.no_grad():
                return model(*args)

        return reference

    def baseline_for(self, dims: dict[str, int]) -> Callable[..., Any]:
        """The Model itself (weights need no grad), so torch.compile sees a plain module."""
        return self.model(dims, "cuda" if torch.cuda.is_available() else "cpu")

    def make_inputs(self, dims: dict[str, int], mode: str, gen: Any) -> tuple[Any, ...]:
        return self.inputs_in(dims, mode, gen, self.outlier_kind)

    def inputs_in(self, dims: dict[str, int], mode: str, gen: Any, outlier_kind: str) -> tuple:
        args = _inputs(self.variant(dims), self.path, "get_inputs", gen.initial_seed())
        args = map_tensors(args, lambda t: t.to(gen.device))
        return with_mode(args, mode, gen, outlier_kind)

    def bind_candidate(self, entry: Any, dims: dict[str, int], device: str) -> Callable[..., Any]:
        """ModelNew built like Model, holding Model's weights: runs in the candidate's process."""
        if not (isinstance(entry, type) and issubclass(entry, torch.nn.Module)):
            raise CandidateSetupError(
                f"{self.entry_point} must be a torch.nn.Module subclass, got {type(entry).__name__}"
            )
        reference = self.model(dims, device)
        candidate = self.build(entry, dims)
        try:
            # the module's own methods, not the candidate's (the static check refuses overrides)
            torch.nn.Module.load_state_dict(candidate, reference.state_dict(), strict=True)
        except RuntimeError as exc:
            raise CandidateSetupError(
                f"{self.entry_point} must hold the same parameters and buffers as Model (same names and "
                f"shapes; the judge copies Model's weights into it), but load_state_dict(strict=True) "
                f"failed: {str(exc)[:1500]}"
            ) from None
        candidate = torch.nn.Module.requires_grad_(torch.nn.Module.to(candidate, device), False)

        def forward(*args: Any) -> Any:
            with torch.no_grad():
                return candidate(*args)

        return forward

    def measure_costs(self, dims: dict[str, int]) -> tuple[float, float]:
        """On the meta device (no compute, any size); where an op has no meta kernel, for real
        (on the GPU when there is one)."""
        try:
            with torch.device("meta"):
                return self._costs_on(dims, None)
        except Exception:  # noqa: BLE001 - a model the meta device cannot run: measure it for real
            return self._costs_on(dims, "cuda" if torch.cuda.is_available() else "cpu")

    def _costs_on(self, dims: dict[str, int], device: str | None) -> tuple[float, float]:
        module = self.variant(dims)
        model = self.build(module.Model, dims)
        args = _inputs(module, self.path, "get_inputs", MODEL_SEED)
        if device is not None:
            model = model.to(device)
            args = map_tensors(args, lambda t: t.to(device))
        weights = [*model.parameters(), *model.buffers()]  # read once, like the inputs
        return measure_costs(lambda: model(*args), (args, weights))


def load(path: Path) -> list[KernelBenchTask]:
    """One task from a KernelBench-style file; TaskError (file, field, problem) when malformed."""
    tree = pyparse.parse(path.read_text(), filename=str(path))
    defined = {s.name for s in tree.body if isinstance(s, ast.ClassDef | ast.FunctionDef)}
    for name, what in REQUIRED.items():
        if name not in defined:
            raise TaskError(path, name, f"missing: a KernelBench problem file defines {what}")
    dims = size_constants(tree, ROOTS)
    cache: dict = {}
    try:
        module = _variant(path, tree, dims, cache)
    except Exception as exc:
        raise TaskError(path, "<file>", f"import failed: {error_text(exc)}") from exc
    if not (isinstance(module.Model, type) and issubclass(module.Model, torch.nn.Module)):
        raise TaskError(path, "Model", "must be a subclass of torch.nn.Module")
    init_names = names_read(tree, ("get_init_inputs",))
    init_dims = {d for d in dims if d.split("[", 1)[0] in init_names}
    input_names = names_read(tree, ("get_inputs",))
    input_dims = {d for d in dims if d.split("[", 1)[0] in input_names}
    try:
        sizes = cpu_sizes.search(
            dims, lambda d: _probe(path, tree, d, cache), init_dims, init_dims - input_dims
        )
    except cpu_sizes.Unrunnable as exc:
        raise TaskError(path, exc.field or "Model", str(exc)) from None
    cpu_dims = sizes.dims
    args = _inputs(_variant(path, tree, cpu_dims, cache), path, "get_inputs", MODEL_SEED)
    if not any(isinstance(a, torch.Tensor) for a in args):
        raise TaskError(path, "get_inputs", "returns no tensor")
    doc = inspect.getdoc(module.Model) or (module.__doc__ or "").strip()
    dtype = dtype_name(args)
    shrunk = cpu_dims != dims
    task = KernelBenchTask(
        id=path.stem,
        name=path.stem,
        category="kernelbench",
        description=doc or f"KernelBench problem {path.stem}: Model.forward",
        entry_point="ModelNew",
        dtype=dtype,
        shapes=(Shape("file", dict(dims), source=f"{path.name}: the sizes the file writes"),),
        cpu_shapes=(
            Shape(
                "cpu" if shrunk else "file", dict(cpu_dims), source="sizes for the CPU interpreter"
            ),
        ),
        tolerance=EXTERNAL_TOLERANCE[dtype],
        forbidden=(),
        modes=BASE_MODES,
        path=path,
        dtypes=(dtype,),
        module=module,
        fmt="kernelbench",
        load_notes=tuple(dtype_notes(args)),
        cpu_notes=tuple(sizes.notes),
        cpu_refusal=sizes.refusal,
        cache=cache,
        tree=tree,
    )
    if sizes.refusal is not None:
        return [task]
    facts = checks.examine([cpu_dims], task.inputs_in, task.reference_for, modes=task.modes)
    return [
        dataclasses.replace(
            task,
            modes=facts.modes,
            outlier_kind=facts.outlier_kind,
            flagged=tuple(facts.flagged),
            load_notes=(*task.load_notes, *facts.notes),
        )
    ]


def _probe(path: Path, tree: ast.Module, dims: dict[str, int], cache: dict) -> cpu_sizes.Probe:
    """The problem run at `dims`: built, its forward run once (never where its inputs are over
    cpu_sizes.TRY_LIMIT elements: those are only counted, on the meta device)."""
    try:
        module = _variant(path, tree, dims, cache)
    except Exception as exc:  # noqa: BLE001 - the file failing at these sizes is the answer
        return cpu_sizes.Probe(f"the file fails: {error_text(exc)[:300]}")
    elements, flops = _meta_cost(module)
    if elements is not None and elements > cpu_sizes.TRY_LIMIT:
        return cpu_sizes.Probe(None, elements, flops or 0.0)
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("get_inputs", lambda: tuple(_inputs(module, path, "get_inputs", MODEL_SEED))),
        ("get_init_inputs", lambda: _inputs(module, path, "get_init_inputs", MODEL_SEED)),
    ]
    values: dict[str, Any] = {}
    for name, step in steps:
        try:
            values[name] = step()
        except TaskError as exc:
            return cpu_sizes.Probe(exc.problem[:300], field=name)
    args = values["get_inputs"]
    try:
        with seeded(MODEL_SEED):
            model = module.Model(*values["get_init_inputs"])
    except Exception as exc:  # noqa: BLE001 - the problem refusing these sizes is the answer
        return cpu_sizes.Probe(
            f"Model(*get_init_inputs()) raised {error_text(exc)[:300]}", field="Model"
        )
    from torch.utils.flop_counter import FlopCounterMode

    try:
        with FlopCounterMode(display=False) as counter, torch.no_grad(), seeded(MODEL_SEED):
            out = model(*args)
    except Exception as exc:  # noqa: BLE001 - the problem refusing these sizes is the answer
        return cpu_sizes.Probe(
            f"raised on get_inputs() {error_text(exc)[:300]}", field="Model.forward"
        )
    if any(t.numel() == 0 for t in tensors(out)):
        return cpu_sizes.Probe("the output has no elements", field="Model.forward")
    return cpu_sizes.Probe(None, numel(args) + numel(out), float(counter.get_total_flops()))


def _meta_cost(module: ModuleType) -> tuple[int | None, float | None]:
    """(elements of the inputs and outputs, counted FLOPs) at the module's sizes, on the meta
    device; None for what cannot be had there (an op with no meta kernel: then the inputs only)."""
    from torch.utils.flop_counter import FlopCounterMode

    try:
        with torch.device("meta"), seeded(MODEL_SEED):
            args = tuple(module.get_inputs())
    except Exception:  # noqa: BLE001 - get_inputs does more than draw tensors: count it for real
        return None, None
    try:
        with torch.device("meta"), seeded(MODEL_SEED):
            model = module.Model(*module.get_init_inputs())
            with FlopCounterMode(display=False) as counter, torch.no_grad():
                out = model(*args)
    except Exception:  # noqa: BLE001 - no meta kernel for some op
        return numel(args), None
    return numel(args) + numel(out), float(counter.get_total_flops())
