"""TritonBench-T / TritonBench-G / KernelBench-X style files as tasks.

Such a file is reference code, a separator line, and test code:

    import torch
    def my_op(x, y, alpha=1.0):            the reference function (helpers may sit beside it; it
        ...                                may itself launch Triton kernels, as TritonBench-G's do)
    ##############################         a line of '#' characters only (at least 10)
    def test_my_op():                      one or more test functions (named test*) that call
        results = {}                       the reference with concrete tensors and return a
        x = torch.randn(64, 32, device="cuda")   dict of outputs
        results["test_case_1"] = my_op(x, x)
        return results
    test_results = test_my_op()            module-level calls of the tests: ignored

The candidate defines a function of the same name (and the same leading parameters).

How the judge runs one (see docs/formats.md): the test functions are run once, under
torch.manual_seed(RECORD_SEED), with the reference replaced by a recorder that keeps each call's
arguments (bound to the reference's parameters: positional ones passed positionally, keyword-only
ones by keyword) and returns the real result so the test goes on. Each recorded call is one case
("shape" call0, call1, ...): the candidate and the reference are called on a fresh copy of its
arguments and their outputs compared. An argument the reference writes into (an `out=` buffer,
GEAK's convention) is an output of the case: the candidate writes it in place, the judge
compares it as an output and does not count the write as a mutation (`Task.output_args`). A call on which the reference raises (a test of its error path) is left out, and the
notes say so. Standard inputs are the recorded ones for every trial; "outlier" inputs amplify a
sparse random subset of every floating-point argument (drawn per trial; see
`benchmarks.formats.checks` for the other modes). Without CUDA, "cuda" devices in the file and in
the suite's helper modules (`benchmarks.formats.suite_imports`) run on the CPU, and Triton kernels
of the reference run in the interpreter; on the CPU interpreter, calls whose inputs exceed
CPU_ELEMENT_BUDGET elements are left out, and the verdict says which.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import inspect
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import torch

from benchmarks import pyparse
from benchmarks.formats import checks, suite_imports
from benchmarks.formats.common import (
    EXTERNAL_TOLERANCE,
    ExternalTask,
    dtype_name,
    dtype_notes,
    error_text,
    exec_module,
    map_tensors,
    measure_costs,
    numel,
    seeded,
    with_mode,
)
from benchmarks.formats.cpu_sizes import CPU_ELEMENT_BUDGET
from benchmarks.formats.devices import to_cpu
from benchmarks.task import BASE_MODES, Shape, TaskError

SEPARATOR = re.compile(r"^#{10,}[ \t]*$", re.M)
RECORD_SEED = 0


@dataclass(frozen=True)
class CallSpec:
    """How one recorded call is made from its flat argument tuple: the first `positional` go
    by position, the rest by the keyword names; the reference writes into the arguments at
    `writes` (they are outputs), and returns a value of its own unless `returns` is False."""

    positional: int
    keywords: tuple[str, ...] = ()
    writes: tuple[int, ...] = ()
    returns: bool = True

    def call(self, fn: Callable[..., Any], flat: tuple, *, copy_buffers: bool = True) -> Any:
        """`fn` called on `flat` as the recorded call was; with written buffers, its outputs are
        (its result, *the buffers) (a tuple result's items in its place: an optimizer step that
        returns its updated tensors) or the buffers alone when it returns nothing of its own. The
        buffers are copied first (`copy_buffers`) or written where they are (the candidate's: the
        judge reads them back as outputs, `Task.output_args`)."""
        args = list(flat)
        if copy_buffers:
            for i in self.writes:
                args[i] = args[i].clone()
        positional, kwargs = self.split(tuple(args))
        result = fn(*positional, **kwargs)
        if not self.writes:
            return result
        outs = [args[i] for i in self.writes]
        if self.returns:
            items = tuple(result) if isinstance(result, tuple | list) else (result,)
            return (*items, *outs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def split(self, flat: tuple) -> tuple[tuple, dict[str, Any]]:
        """`flat` as the recorded call passed it: (by position, by keyword)."""
        return flat[: self.positional], dict(
            zip(self.keywords, flat[self.positional :], strict=True)
        )


@dataclass(frozen=True)
class TritonBenchTask(ExternalTask):
    shape_dims_vary: ClassVar[bool] = False  # "call" indexes the recorded calls: not a size
    calls: tuple[tuple[Any, ...], ...] = field(default=(), compare=False, repr=False)
    specs: tuple[CallSpec, ...] = field(default=(), compare=False, repr=False)

    def signature(self) -> inspect.Signature:
        """The reference's leading positional parameters that the recorded calls fill."""
        sig = inspect.signature(self.entry_reference())
        used = max(s.positional for s in self.specs)
        return sig.replace(parameters=list(sig.parameters.values())[:used])

    def entry_reference(self) -> Callable[..., Any]:
        """The file's reference function itself, with its own parameters and defaults."""
        return getattr(self._mod(), self.entry_point)

    def entry_call(self, dims: dict[str, int], args: tuple[Any, ...]) -> tuple[tuple, dict]:
        """The recorded call's inputs split as it passed them (keyword-only ones by keyword)."""
        return self.specs[dims["call"]].split(tuple(args))

    @property
    def reference(self) -> Callable[..., Any]:
        """The reference as the first recorded call makes it (see `reference_for`)."""
        return self.reference_for({"call": 0})

    def reference_for(self, dims: dict[str, int]) -> Callable[..., Any]:
        spec, fn = self.specs[dims["call"]], self.entry_reference()
        return lambda *flat: spec.call(fn, flat)

    def bind_candidate(self, entry: Any, dims: dict[str, int], device: str) -> Callable[..., Any]:
        """The candidate called as the reference is: keywords by name, the buffers it writes
        returned as outputs (runs in the candidate's process)."""
        spec = self.specs[dims["call"]]
        return lambda *flat: spec.call(entry, flat, copy_buffers=False)

    def output_args(self, dims: dict[str, int]) -> tuple[int, ...]:
        return self.specs[dims["call"]].writes

    def baseline_for(self, dims: dict[str, int]) -> Callable[..., Any]:
        return self.reference_for(dims)

    def make_inputs(self, dims: dict[str, int], mode: str, gen: Any) -> tuple[Any, ...]:
        return self.inputs_in(dims, mode, gen, self.outlier_kind)

    def inputs_in(self, dims: dict[str, int], mode: str, gen: Any, outlier_kind: str) -> tuple:
        args = map_tensors(self.calls[dims["call"]], lambda t: t.detach().to(gen.device, copy=True))
        return with_mode(args, mode, gen, outlier_kind)

    def measure_costs(self, dims: dict[str, int]) -> tuple[float, float]:
        args = map_tensors(self.calls[dims["call"]], lambda t: t.detach().clone())
        return measure_costs(lambda: self.reference_for(dims)(*args), args)


def split(path: Path, text: str) -> tuple[str, str]:
    """(reference code, test code), the test code padded with blank lines so that line numbers in
    errors are the file's."""
    match = SEPARATOR.search(text)
    if match is None:
        raise TaskError(
            path,
            "separator",
            "no line of '#' characters (at least 10) separating the reference code from the test code",
        )
    reference = text[: match.start()]
    return reference, "\n" * reference.count("\n") + text[match.end() :]


@contextmanager
def _interpreted(on_cpu: bool) -> Iterator[None]:
    """Triton kernels defined meanwhile run in the interpreter (on the CPU): `triton.jit` reads
    TRITON_INTERPRET when it decorates a function. The interpreter is mended as the judge's
    worker mends it (`interp_rounding.patch`: GPU rounding to bf16, scalar indices under
    numpy >= 2.4), so a file's own kernels run here as they would be judged."""
    if on_cpu:
        from benchmarks.harness.interp_rounding import patch

        patch()
    if not on_cpu or os.environ.get("TRITON_INTERPRET") == "1":
        yield
        return
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        yield
    finally:
        os.environ.pop("TRITON_INTERPRET", None)


def load(path: Path) -> list[TritonBenchTask]:
    """One task from a TritonBench-style file; TaskError (file, field, problem) when malformed."""
    reference_src, test_src = split(path, path.read_text())
    ref_tree, test_tree = _parse(path, reference_src), _parse(path, test_src)
    tests = [
        s.name
        for s in test_tree.body
        if isinstance(s, ast.FunctionDef) and s.name.startswith("test")
    ]
    if not tests:
        raise TaskError(
            path,
            "test function",
            "no `def test_...()` after the separator line; the test function calls the reference on concrete inputs",
        )
    functions = [s.name for s in ref_tree.body if isinstance(s, ast.FunctionDef)]
    if not functions:
        raise TaskError(path, "reference function", "no function defined above the separator line")
    entry = _entry_point(path, functions, test_tree, tests)
    on_cpu = not torch.cuda.is_available()
    rewrite = to_cpu if on_cpu else ast.fix_missing_locations
    try:
        helpers = suite_imports.helpers_of(
            path, ast.Module(body=[*ref_tree.body, *test_tree.body], type_ignores=[])
        )
    except ValueError as exc:
        raise TaskError(path, "<imports>", str(exc)) from None
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    with suite_imports.helper_finder(helpers, rewrite), _interpreted(on_cpu):
        try:
            module = exec_module(rewrite(ref_tree), path, f"kernforge_tritonbench_{digest}")
        except Exception as exc:
            raise TaskError(path, "<file>", f"import failed: {error_text(exc)}") from exc
        rec = _record(path, module, _test_code(test_tree, tests, rewrite), entry, tests)
    if not rec.calls:
        raise TaskError(path, "test function", rec.why_none(entry))
    shapes = tuple(
        Shape(
            f"call{i}",
            {"call": i},
            source=f"{rec.made_by[i]}: {entry}({_describe_call(args, spec)})",
        )
        for i, (args, spec) in enumerate(zip(rec.calls, rec.specs, strict=True))
    )
    cpu_shapes, cpu_notes = _cpu_shapes(shapes, rec.calls)
    reference = getattr(module, entry)
    doc = inspect.getdoc(reference) or (module.__doc__ or "").strip()
    dtype = dtype_name(rec.calls)
    task = TritonBenchTask(
        id=path.stem,
        name=path.stem,
        category="tritonbench",
        description=doc or f"TritonBench problem {path.stem}: {entry}",
        entry_point=entry,
        dtype=dtype,
        shapes=shapes,
        cpu_shapes=cpu_shapes,
        tolerance=EXTERNAL_TOLERANCE[dtype],
        forbidden=(),
        modes=BASE_MODES,
        path=path,
        dtypes=(dtype,),
        module=module,
        fmt="tritonbench",
        load_notes=(*rec.notes(entry), *dtype_notes(rec.calls)),
        cpu_notes=tuple(cpu_notes),
        suite_root=suite_imports.suite_root(path, helpers) if helpers else None,
        helpers=tuple(suite_imports.helper_files(helpers)),
        calls=tuple(rec.calls),
        specs=tuple(rec.specs),
    )
    cases = [dict(s.dims) for s in (cpu_shapes if on_cpu else shapes)]
    with _interpreted(on_cpu):
        facts = checks.examine(
            cases,
            task.inputs_in,
            task.reference_for,
            modes=task.modes,
            device="cpu" if on_cpu else "cuda",  # where the recorded calls run
        )
    return [
        dataclasses.replace(
            task,
            modes=facts.modes,
            outlier_kind=facts.outlier_kind,
            flagged=tuple(facts.flagged),
            load_notes=(*task.load_notes, *facts.notes),
        )
    ]


def _parse(path: Path, source: str) -> ast.Module:
    try:
        return pyparse.parse(source, filename=str(path))
    except SyntaxError as exc:
        raise TaskError(path, "<file>", f"syntax error at line {exc.lineno}: {exc.msg}") from exc


def _called_names(tree: ast.AST) -> list[str]:
    names = [
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    ]
    return list(dict.fromkeys(names))


def _entry_point(path: Path, functions: list[str], test_tree: ast.Module, tests: list[str]) -> str:
    """The function above the separator that the test code calls (by name)."""
    called = [n for n in _called_names(test_tree) if n in functions]
    if len(called) == 1:
        return called[0]
    named = [n for n in called if f"test_{n}" in tests]
    if len(named) == 1:
        return named[0]
    if not called:
        raise TaskError(
            path,
            "test function",
            f"calls none of the functions defined above the separator ({', '.join(functions)})",
        )
    raise TaskError(
        path,
        "reference function",
        f"the tests call several functions defined above the separator ({', '.join(called)}); name the test test_<reference>",
    )


def _test_code(
    tree: ast.Module, tests: list[str], rewrite: Callable[[ast.Module], ast.Module]
) -> ast.Module:
    """The test code without its module-level calls of the tests and prints (the judge calls the
    tests itself)."""
    keep = []
    for stmt in tree.body:
        calls = _called_names(stmt)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            keep.append(stmt)
        elif not any(name in tests or name == "print" for name in calls):
            keep.append(stmt)
    return rewrite(ast.Module(body=keep, type_ignores=[]))


@dataclass
class _Recording:
    calls: list[tuple] = field(default_factory=list)
    specs: list[CallSpec] = field(default_factory=list)
    made_by: list[str] = field(default_factory=list)
    unbound: int = 0  # calls that do not bind to the reference's signature
    raised: list[str] = field(default_factory=list)  # calls on which the reference raised
    broken: list[str] = field(default_factory=list)  # tests that raised themselves

    def notes(self, entry: str) -> list[str]:
        out = []
        if self.raised:
            out.append(
                f"{len(self.raised)} call(s) of {entry} left out: the reference raises on them "
                f"(tests of its error path; the judge compares outputs only): {'; '.join(self.raised[:3])}"
            )
        if self.broken:
            out.append(f"calls after a failing test are not recorded: {'; '.join(self.broken[:3])}")
        writes = sorted({i for s in self.specs for i in s.writes})
        if writes:
            out.append(
                f"the reference writes into argument(s) {', '.join(map(str, writes))} (out= "
                "buffers): each is an output, compared after the call, not an input mutation"
            )
        return out

    def why_none(self, entry: str) -> str:
        if self.broken:
            return f"no call of {entry} recorded: {self.broken[0]}"
        if self.raised:
            return f"the reference raises on every call the tests make: {self.raised[0]}"
        return f"the tests never call {entry}"


def _record(
    path: Path, module: ModuleType, test_code: ast.Module, entry: str, tests: list[str]
) -> _Recording:
    """Run the tests with the reference replaced by a recorder (see the module docstring)."""
    reference: Callable[..., Any] = getattr(module, entry)
    sig = inspect.signature(reference)
    rec = _Recording()
    current = [""]

    def recorder(*args: Any, **kwargs: Any) -> Any:
        bound = _bind(sig, args, kwargs)
        if bound is None:
            rec.unbound += 1
            return reference(*args, **kwargs)
        flat, n_pos, names = bound
        before = map_tensors(flat, lambda t: t.detach().clone())
        try:
            result = reference(*args, **kwargs)
        except Exception as exc:
            rec.raised.append(f"{current[0]}: {error_text(exc)[:160]}")
            raise
        writes = tuple(
            i
            for i, (a, b) in enumerate(zip(before, flat, strict=True))
            if isinstance(a, torch.Tensor) and not checks.same(a, b.detach())
        )
        returns = result is not None and not any(result is flat[i] for i in writes)
        spec = CallSpec(n_pos, names, writes, returns)
        rec.calls.append(_poisoned_buffers(reference, spec, before))
        rec.specs.append(spec)
        rec.made_by.append(current[0])
        return result

    namespace = dict(vars(module))
    namespace[entry] = recorder
    with seeded(RECORD_SEED):
        try:
            exec(pyparse.compile_tree(test_code, str(path)), namespace)  # noqa: S102 - the task file is trusted
        except Exception as exc:
            raise TaskError(path, "<test code>", f"failed: {error_text(exc)}") from exc
        for name in tests:
            current[0] = name
            try:
                namespace[name]()
            except Exception as exc:  # noqa: BLE001 - recorded calls before it still count
                if not rec.calls:
                    raise TaskError(path, name, f"raised {error_text(exc)}") from exc
                rec.broken.append(f"{name} raised {error_text(exc)[:160]}")
    return rec


def _poison(t: torch.Tensor) -> torch.Tensor:
    if t.is_floating_point() or t.is_complex():
        return torch.full_like(t, float("nan"))
    if t.dtype == torch.bool:
        return torch.ones_like(t)
    return torch.full_like(t, torch.iinfo(t.dtype).max)


def _poisoned_buffers(reference: Callable[..., Any], spec: CallSpec, before: tuple) -> tuple:
    """The recorded arguments with each buffer the reference writes and never reads (an `out=`
    from `torch.empty`, whose bytes differ from process to process) filled with NaN (integers:
    their maximum), so every process regenerates the same inputs and a kernel that leaves part
    of the buffer unwritten shows. A buffer whose content the reference reads keeps it."""
    flat = list(before)
    for i in spec.writes:
        trials = []
        for fill in (_poison, torch.zeros_like):
            args = map_tensors(tuple(flat), lambda t: t.clone())
            args = (*args[:i], fill(args[i]), *args[i + 1 :])
            try:
                trials.append(spec.call(reference, args))
            except Exception:  # noqa: BLE001 - a reference that needs the content: keep it
                break
        if len(trials) == 2 and checks.same(trials[0], trials[1]):
            flat[i] = _poison(flat[i])
    return tuple(flat)


def _bind(
    sig: inspect.Signature, args: tuple, kwargs: dict
) -> tuple[tuple, int, tuple[str, ...]] | None:
    """A call's arguments as (flat values, how many go by position, the keyword names of the
    rest): positional parameters up to the last one given, defaults filling the gaps
    (`f(x, keepdim=True)` -> `(x, -1, True)`), then keyword-only and **kwargs ones by name.
    None when the call does not bind (the reference then raises itself)."""
    try:
        given = sig.bind(*args, **kwargs).arguments
    except TypeError:
        return None
    params = list(sig.parameters.values())
    ordered = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    last = max((i for i, p in enumerate(ordered) if p.name in given), default=-1)
    values = tuple(given[p.name] if p.name in given else p.default for p in ordered[: last + 1])
    varargs = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
    if varargs:
        values += tuple(given.get(varargs, ()))
    names: list[str] = []
    extra: list[Any] = []
    for p in params:
        if p.kind == p.KEYWORD_ONLY and p.name in given:
            names.append(p.name)
            extra.append(given[p.name])
        elif p.kind == p.VAR_KEYWORD and p.name in given:
            names += list(given[p.name])
            extra += list(given[p.name].values())
    return values + tuple(extra), len(values), tuple(names)


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"{str(value.dtype).removeprefix('torch.')}{list(value.shape)}"
    if isinstance(value, tuple | list):
        inner = ", ".join(_describe(v) for v in value[:4])
        return f"[{inner}{', ...' if len(value) > 4 else ''}]"
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _describe_call(flat: tuple, spec: CallSpec) -> str:
    parts = [_describe(a) for a in flat[: spec.positional]]
    parts += [
        f"{k}={_describe(v)}" for k, v in zip(spec.keywords, flat[spec.positional :], strict=True)
    ]
    return ", ".join(parts)


def _cpu_shapes(
    shapes: tuple[Shape, ...], calls: list[tuple]
) -> tuple[tuple[Shape, ...], list[str]]:
    """The calls the CPU interpreter runs: those within CPU_ELEMENT_BUDGET input elements (the
    smallest one when none is)."""
    sizes = [numel(c) for c in calls]
    fit = tuple(s for s, n in zip(shapes, sizes, strict=True) if n <= CPU_ELEMENT_BUDGET)
    if not fit:
        fit = (shapes[sizes.index(min(sizes))],)
    left = [f"{s.name} ({sizes[i]} elements)" for i, s in enumerate(shapes) if s not in fit]
    if not left:
        return fit, []
    return fit, [
        f"left out on the CPU interpreter (inputs over {CPU_ELEMENT_BUDGET} elements): {', '.join(left)}"
    ]
