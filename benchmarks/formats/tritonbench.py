"""TritonBench-T / KernelBench-X style files as tasks.

Such a file is reference code, a separator line, and test code:

    import torch
    def my_op(x, y, alpha=1.0):            the reference function (helpers may sit beside it)
        ...
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
arguments (bound to the reference's parameters, passed positionally) and returns the real
result so the test goes on. Each recorded call is one case ("shape" call0, call1, ...): the
candidate and the reference are called on a fresh copy of its arguments and their outputs
compared. Standard inputs are the recorded ones for every trial; "outlier" inputs amplify a
sparse random subset of every floating-point argument (drawn per trial). Without CUDA,
"cuda" device strings and `.cuda()` calls in the file run on the CPU; on the CPU interpreter,
calls whose inputs exceed CPU_ELEMENT_BUDGET elements are left out, and the verdict says which.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import torch

from benchmarks import pyparse
from benchmarks.formats.common import (
    CPU_ELEMENT_BUDGET,
    EXTERNAL_TOLERANCE,
    ExternalTask,
    dtype_name,
    error_text,
    exec_module,
    map_tensors,
    measure_costs,
    numel,
    seeded,
    with_outliers,
)
from benchmarks.task import BASE_MODES, Shape, TaskError

SEPARATOR = re.compile(r"^#{10,}[ \t]*$", re.M)
RECORD_SEED = 0


@dataclass(frozen=True)
class TritonBenchTask(ExternalTask):
    shape_dims_vary: ClassVar[bool] = False  # "call" indexes the recorded calls: not a size
    calls: tuple[tuple[Any, ...], ...] = field(default=(), compare=False, repr=False)

    def signature(self) -> inspect.Signature:
        """The reference's leading parameters that the recorded calls fill."""
        sig = inspect.signature(self.reference)
        used = max(len(c) for c in self.calls)
        return sig.replace(parameters=list(sig.parameters.values())[:used])

    def make_inputs(self, dims: dict[str, int], mode: str, gen: Any) -> tuple[Any, ...]:
        args = map_tensors(self.calls[dims["call"]], lambda t: t.detach().to(gen.device, copy=True))
        return with_outliers(args, mode, gen)

    def measure_costs(self, dims: dict[str, int]) -> tuple[float, float]:
        args = map_tensors(self.calls[dims["call"]], lambda t: t.detach().clone())
        return measure_costs(lambda: self.reference(*args), args)


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
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    try:
        module = exec_module(
            _to_cpu(ref_tree) if on_cpu else ref_tree, path, f"kernforge_tritonbench_{digest}"
        )
    except Exception as exc:
        raise TaskError(path, "<file>", f"import failed: {error_text(exc)}") from exc
    calls, tests_of, dropped = _record(
        path, module, _test_code(test_tree, tests, on_cpu), entry, tests
    )
    if not calls:
        why = (
            f"; its {dropped} call(s) pass keyword-only arguments, which the judge cannot pass positionally"
            if dropped
            else ""
        )
        raise TaskError(path, "test function", f"the tests never call {entry}{why}")
    notes = (
        [f"{dropped} call(s) of {entry} with keyword-only arguments were left out"]
        if dropped
        else []
    )
    shapes = tuple(
        Shape(
            f"call{i}",
            {"call": i},
            source=f"{tests_of[i]}: {entry}({', '.join(_describe(a) for a in args)})",
        )
        for i, args in enumerate(calls)
    )
    cpu_shapes, cpu_notes = _cpu_shapes(shapes, calls)
    reference = getattr(module, entry)
    doc = inspect.getdoc(reference) or (module.__doc__ or "").strip()
    dtype = dtype_name(calls)
    return [
        TritonBenchTask(
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
            load_notes=tuple(notes),
            cpu_notes=tuple(cpu_notes),
            calls=tuple(calls),
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


class _ToCPU(ast.NodeTransformer):
    """Device strings "cuda" / "cuda:N" -> "cpu", and `x.cuda()` -> `x.to("cpu")`."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str) and (node.value == "cuda" or node.value.startswith("cuda:")):
            return ast.copy_location(ast.Constant("cpu"), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "cuda" and not node.args:
            node.func.attr = "to"
            node.args = [ast.Constant("cpu")]
            node.keywords = []
        return node


def _to_cpu(tree: ast.Module) -> ast.Module:
    return ast.fix_missing_locations(_ToCPU().visit(tree))


def _test_code(tree: ast.Module, tests: list[str], on_cpu: bool) -> ast.Module:
    """The test code without its module-level calls of the tests and prints (the judge calls the
    tests itself)."""
    keep = []
    for stmt in tree.body:
        calls = _called_names(stmt)
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            keep.append(stmt)
        elif not any(name in tests or name == "print" for name in calls):
            keep.append(stmt)
    module = ast.Module(body=keep, type_ignores=[])
    return _to_cpu(module) if on_cpu else ast.fix_missing_locations(module)


def _record(
    path: Path, module: ModuleType, test_code: ast.Module, entry: str, tests: list[str]
) -> tuple[list[tuple], list[str], int]:
    """Run the tests with the reference replaced by a recorder: (each call's positional
    arguments, the test that made it, how many calls were left out for keyword-only arguments)."""
    reference: Callable[..., Any] = getattr(module, entry)
    sig = inspect.signature(reference)
    calls: list[tuple] = []
    made_by: list[str] = []
    dropped = 0
    current = [""]

    def recorder(*args: Any, **kwargs: Any) -> Any:
        nonlocal dropped
        positional = _positional(sig, args, kwargs)
        if positional is not None:
            calls.append(map_tensors(positional, lambda t: t.detach().clone()))
            made_by.append(current[0])
        else:
            dropped += 1
        return reference(*args, **kwargs)

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
            except Exception as exc:
                raise TaskError(path, name, f"raised {error_text(exc)}") from exc
    return calls, made_by, dropped


def _positional(sig: inspect.Signature, args: tuple, kwargs: dict) -> tuple | None:
    """The call's arguments as positional ones: parameters up to the last one given, defaults
    filling the gaps (`f(x, keepdim=True)` -> `(x, -1, True)`). None when a keyword-only or
    **kwargs argument is given, or the call does not bind (the reference then raises itself)."""
    try:
        given = sig.bind(*args, **kwargs).arguments
    except TypeError:
        return None
    params = list(sig.parameters.values())
    if any(p.kind in (p.KEYWORD_ONLY, p.VAR_KEYWORD) and p.name in given for p in params):
        return None
    ordered = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    last = max((i for i, p in enumerate(ordered) if p.name in given), default=-1)
    values = tuple(given[p.name] if p.name in given else p.default for p in ordered[: last + 1])
    varargs = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
    return values + tuple(given.get(varargs, ())) if varargs else values


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"{str(value.dtype).removeprefix('torch.')}{list(value.shape)}"
    if isinstance(value, tuple | list):
        inner = ", ".join(_describe(v) for v in value[:4])
        return f"[{inner}{', ...' if len(value) > 4 else ''}]"
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


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
