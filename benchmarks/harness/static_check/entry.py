"""Steps 3 and 4 of the static check: the entry point's signature (a function's positional
parameters, or a class entry's ``forward``) and the kernels it launches, directly or through the
module-level helpers and classes it reaches."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from benchmarks.harness.static_check.facts import ModuleFacts
from benchmarks.verdict import ErrorClass

if TYPE_CHECKING:
    from benchmarks.harness.static_check.check import StaticResult


def check_signature(fn: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]) -> str | None:
    """What is wrong with a function entry point's signature (None when nothing): it takes the
    task's positional parameters in order; extra parameters (tunables) need defaults."""
    if isinstance(fn, ast.AsyncFunctionDef):
        return f"`{fn.name}` is `async def`; it must be a plain function"
    args = fn.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    n_defaults = len(args.defaults)
    first_default = len(positional) - n_defaults
    want = ", ".join(params)
    got = ", ".join(positional)
    if positional[: len(params)] != list(params):
        return (
            f"`{fn.name}` must take the positional parameters ({want}) in this order, got ({got})"
        )
    extra = positional[len(params) :]
    for i, name in enumerate(extra, start=len(params)):
        if i < first_default:
            return (
                f"extra parameter `{name}` of `{fn.name}` has no default; parameters beyond "
                f"({want}) are tunables and need defaults"
            )
    for kw, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is None:
            return f"keyword-only parameter `{kw.arg}` of `{fn.name}` needs a default"
    return None


def _find_method(
    facts: ModuleFacts, cls: ast.ClassDef, name: str, seen: frozenset[str] = frozenset()
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """`cls.name`, looked up in the class and then in its bases defined in the same file."""
    for stmt in reversed(cls.body):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name == name:
            return stmt
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in facts.classes and base.id not in seen:
            found = _find_method(facts, facts.classes[base.id], name, seen | {cls.name})
            if found is not None:
                return found
    return None


def _check_forward(fn: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]) -> str | None:
    """A class entry's forward(self, ...) takes the reference's inputs positionally (counted, not
    named: the judge calls it positionally); extra parameters need defaults."""
    if isinstance(fn, ast.AsyncFunctionDef):
        return "forward is `async def`; it must be a plain method"
    args = fn.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)][1:]  # after self
    want = f"{len(params)} input(s), like Model.forward({', '.join(params)})"
    if len(positional) < len(params) and args.vararg is None:
        return f"forward must take {want}; it takes ({', '.join(positional)})"
    required = len(positional) - len(args.defaults)
    if required > len(params):
        extra = ", ".join(positional[len(params) : required])
        return f"forward must take {want}; extra parameter(s) {extra} need defaults"
    for kw, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is None:
            return f"forward: keyword-only parameter `{kw.arg}` needs a default"
    return None


def reachable_launches(facts: ModuleFacts, entry: ast.AST) -> list[str]:
    """Kernels launched from `entry`, following calls and references to module-level functions
    and classes, transitively."""
    launched: set[str] = set()
    referenced_kernels: set[str] = set()
    generic_launch = False
    seen: set[int] = set()
    todo: list[ast.AST] = [entry]
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        body = fn.body if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) else [fn]
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                    names = facts.kernel_names_in(node.value)
                    launched |= names
                    if not names and isinstance(node.value, ast.Name) and _is_call_func(stmt, node):
                        generic_launch = True  # p[grid](...) with p a parameter
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "run"
                ):
                    launched |= facts.kernel_names_in(node.func.value)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    referenced_kernels |= facts.kernel_alias(node.id, frozenset())
                    for target in _local_targets(facts, node.id):
                        todo.append(target)
    if generic_launch:
        launched |= referenced_kernels
    return sorted(launched)


def _is_call_func(root: ast.AST, sub: ast.Subscript) -> bool:
    return any(isinstance(n, ast.Call) and n.func is sub for n in ast.walk(root))


def _local_targets(facts: ModuleFacts, name: str) -> Iterator[ast.AST]:
    names = {name} | {r.id for r in facts.aliases.get(name, ()) if isinstance(r, ast.Name)}
    for n in names:
        if n in facts.functions:
            yield facts.functions[n]
        if n in facts.classes:
            for item in facts.classes[n].body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield item


def check_class_entry(
    facts: ModuleFacts,
    entry: ast.AST | None,
    entry_point: str,
    params: list[str],
    filename: str,
    result: Callable[[ErrorClass, str, int | None], StaticResult],
) -> StaticResult:
    """Steps 3 and 4 for a class entry point (KernelBench's ModelNew)."""
    if not isinstance(entry, ast.ClassDef):
        defined = sorted(facts.classes)
        hint = f" It defines the classes: {', '.join(defined)}." if defined else ""
        return result(
            ErrorClass.MISSING_ENTRY_POINT,
            f"{filename}: no top-level `class {entry_point}(nn.Module)` with a "
            f"`forward(self, {', '.join(params)})`.{hint}",
            None,
        )
    forward = _find_method(facts, entry, "forward")
    if forward is None:
        return result(
            ErrorClass.MISSING_ENTRY_POINT,
            f"{filename}: line {entry.lineno}: class `{entry_point}` has no `forward` method",
            entry.lineno,
        )
    problem = _check_forward(forward, params)
    if problem:
        return result(
            ErrorClass.SIGNATURE_MISMATCH,
            f"{filename}: line {forward.lineno}: {entry_point}.{problem}",
            forward.lineno,
        )
    kernels = sorted(facts.kernels, key=lambda k: (facts.kernels[k], k))
    launched = reachable_launches(facts, entry)
    if not kernels:
        return result(
            ErrorClass.NO_TRITON_KERNEL,
            f"{filename}: defines no @triton.jit kernel; {entry_point}.forward must compute "
            "with Triton kernels",
            entry.lineno,
        )
    if not launched:
        return result(
            ErrorClass.NO_TRITON_KERNEL,
            f"{filename}: line {entry.lineno}: `{entry_point}` never launches a kernel "
            f"(defined: {', '.join(kernels)}); launch one with kernel[grid](...) from forward "
            "or a helper it calls",
            entry.lineno,
        )
    return result(
        ErrorClass.NONE,
        f"static check passed: kernels {', '.join(kernels)}; launched {', '.join(launched)}",
        None,
    )
