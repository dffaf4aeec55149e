"""The static check's public functions: parse a candidate, walk it for forbidden APIs, check
its entry point and launches, and return one StaticResult (the first failing step, in the order
the package docstring lists)."""

from __future__ import annotations

import ast
import codecs
import tokenize
from dataclasses import dataclass, field

from benchmarks import pyparse
from benchmarks.harness.static_check.entry import (
    check_class_entry,
    check_signature,
    reachable_launches,
)
from benchmarks.harness.static_check.facts import ModuleFacts
from benchmarks.harness.static_check.walker import ForbiddenApiWalker
from benchmarks.task import Task
from benchmarks.verdict import ErrorClass


@dataclass
class StaticResult:
    """What the static stage decided about one candidate source."""

    ok: bool
    error_class: ErrorClass
    message: str
    line: int | None = None
    kernels: list[str] = field(default_factory=list)  # names of @triton.jit functions
    launched: list[str] = field(default_factory=list)  # kernels the entry point launches


_MAX_LISTED = 8


def declared_encoding(source: str) -> str | None:
    """The encoding a coding cookie (PEP 263) declares, when it is not UTF-8; None for UTF-8 or no
    cookie. The check parses the text as it was read, but Python's importer decodes the file's
    bytes by the cookie: any other encoding (utf-7 turns `+AAo-` in a comment into a new line of
    code) makes the two read different programs."""
    lines = iter(source.encode("utf-8", errors="surrogateescape").splitlines(keepends=True))
    try:
        name, _ = tokenize.detect_encoding(lambda: next(lines, b""))
    except SyntaxError as exc:  # an encoding Python does not know
        return str(exc)
    return None if codecs.lookup(name).name in ("utf-8", "utf-8-sig") else name


def check_source(
    source: str,
    *,
    entry_point: str,
    params: list[str],
    forbidden: tuple[str, ...] = (),
    filename: str = "<candidate>",
    entry_kind: str = "function",
) -> StaticResult:
    """Statically check one candidate source against a task's entry point, parameters and
    forbidden APIs (added to GLOBAL_FORBIDDEN). Never executes the candidate.

    `entry_kind` "class": the entry point is an nn.Module class whose forward takes `params`."""
    declared = declared_encoding(source)
    if declared is not None:
        return StaticResult(
            False,
            ErrorClass.SYNTAX_ERROR,
            f"{filename}: declares its source encoding as {declared!r}; candidates are UTF-8 "
            "(Python would decode the file otherwise than it was checked: a utf-7 cookie hid "
            "code in a comment)",
            1,
        )
    try:
        tree = pyparse.parse(source, filename=filename)
    except SyntaxError as exc:
        col = f", column {exc.offset}" if exc.offset else ""
        return StaticResult(
            False,
            ErrorClass.SYNTAX_ERROR,
            f"{filename}: syntax error at line {exc.lineno}{col}: {exc.msg}",
            exc.lineno,
        )
    except (ValueError, RecursionError, MemoryError) as exc:
        return StaticResult(
            False,
            ErrorClass.SYNTAX_ERROR,
            f"{filename}: cannot be parsed: {type(exc).__name__}: {exc}",
        )
    try:
        return _check_tree(
            tree, entry_point, list(params), tuple(forbidden), filename, entry_kind == "class"
        )
    except RecursionError:
        return StaticResult(
            False,
            ErrorClass.SYNTAX_ERROR,
            f"{filename}: nested too deeply to be analysed; simplify the source",
        )


def check_task_candidate(source: str, task: Task, filename: str = "<candidate>") -> StaticResult:
    """check_source with the entry point, parameters and forbidden list of a loaded Task."""
    params = [
        name
        for name, p in task.signature().parameters.items()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return check_source(
        source,
        entry_point=task.entry_point,
        params=params,
        forbidden=tuple(task.forbidden),
        filename=filename,
        entry_kind=task.entry_kind,
    )


def _check_tree(
    tree: ast.Module,
    entry_point: str,
    params: list[str],
    forbidden: tuple[str, ...],
    filename: str,
    class_entry: bool = False,
) -> StaticResult:
    facts = ModuleFacts(tree)
    kernels = sorted(facts.kernels, key=lambda k: (facts.kernels[k], k))

    walker = ForbiddenApiWalker(facts, forbidden, class_entry)
    walker.visit(tree)
    violations = sorted(set(walker.violations), key=lambda v: (v.line, v.col, v.api))

    kind = ast.ClassDef if class_entry else (ast.FunctionDef, ast.AsyncFunctionDef)
    entry = None
    for stmt in tree.body:
        if isinstance(stmt, kind) and stmt.name == entry_point:
            entry = stmt  # the last definition wins, as in Python
    # a class entry launches from forward or any method it holds
    launched = reachable_launches(facts, entry) if entry is not None else []

    def result(error: ErrorClass, message: str, line: int | None) -> StaticResult:
        ok = error == ErrorClass.NONE
        return StaticResult(ok, error, message, line, kernels, launched)

    if violations:
        first = violations[0]
        lines = [f"{filename}: forbidden API at {first.render()}"]
        lines += [f"  also {v.render()}" for v in violations[1:_MAX_LISTED]]
        if len(violations) > _MAX_LISTED:
            lines.append(f"  ... and {len(violations) - _MAX_LISTED} more")
        lines.append(
            "A candidate computes with @triton.jit kernels; PyTorch may only allocate, "
            "view and describe tensors."
        )
        return result(ErrorClass.FORBIDDEN_API, "\n".join(lines), first.line)

    if class_entry:
        return check_class_entry(facts, entry, entry_point, params, filename, result)

    if entry is None:
        defined = sorted(n for n in facts.functions if n not in facts.kernels)
        hint = f" It defines: {', '.join(defined)}." if defined else ""
        assigned = entry_point in facts.module_names
        how = f" `{entry_point}` is assigned, not defined with def." if assigned else ""
        return result(
            ErrorClass.MISSING_ENTRY_POINT,
            f"{filename}: no top-level `def {entry_point}({', '.join(params)})`.{how}{hint}",
            None,
        )

    problem = check_signature(entry, params)
    if problem:
        return result(
            ErrorClass.SIGNATURE_MISMATCH,
            f"{filename}: line {entry.lineno}: {problem}",
            entry.lineno,
        )

    if not kernels:
        return result(
            ErrorClass.NO_TRITON_KERNEL,
            f"{filename}: defines no @triton.jit kernel; the computation must be a "
            "Triton kernel launched from the entry point",
            entry.lineno,
        )
    if not launched:
        return result(
            ErrorClass.NO_TRITON_KERNEL,
            f"{filename}: line {entry.lineno}: `{entry_point}` never launches a "
            f"kernel (defined: {', '.join(kernels)}); launch one with "
            "kernel[grid](...) from the entry point or a helper it calls",
            entry.lineno,
        )

    return result(
        ErrorClass.NONE,
        f"static check passed: kernels {', '.join(kernels)}; launched {', '.join(launched)}",
        None,
    )
