"""A kernel's declared tunables, read and rewritten from its source text (nothing is imported or run).

A kernel declares what may be tuned the way the knowledge base's reference kernels and templates
do: the values to try in a module-level literal `KB_META = {"tunables": {"BLOCK_N": [1024, 2048],
"num_warps": [4, 8]}}`, and each of those names as a trailing keyword argument of the entry point
with a literal default (of `ModelNew.forward` for a class entry point). `declared_space` reads
the two together: only names both listed and exposed can be searched. A configuration is the
source with those defaults rewritten (`set_tunables`). The offline policy's generated and
knowledge-base kernels and the model's kernels are all read here.
"""

from __future__ import annotations

import ast
import hashlib
from typing import Any

from benchmarks import parse_python


def kb_meta(source: str) -> dict[str, Any] | None:
    """The literal `KB_META = {...}` of a reference kernel, or None."""
    try:
        tree = parse_python(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "KB_META" for t in node.targets
        ):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


def entry_function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    """The top-level function `name`, or the forward of a top-level class `name` (a
    KernelBench ModelNew: its tunables are forward's keyword arguments)."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
        if isinstance(node, ast.ClassDef) and node.name == name:
            return next(
                (s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "forward"),
                None,
            )
    return None


def keyword_defaults(fn: ast.FunctionDef) -> list[tuple[ast.arg, ast.expr]]:
    """(argument, default expression) for every argument of `fn` that has a default."""
    positional = [*fn.args.posonlyargs, *fn.args.args]
    pairs = list(
        zip(positional[len(positional) - len(fn.args.defaults) :], fn.args.defaults, strict=True)
    )
    pairs += [
        (a, d)
        for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True)
        if d is not None
    ]
    return pairs


def tunable_values(source: str, entry_point: str) -> dict[str, Any]:
    """The entry point's keyword arguments whose defaults are literals: {name: default}."""
    try:
        fn = entry_function(parse_python(source), entry_point)
    except SyntaxError:
        return {}
    if fn is None:
        return {}
    out = {}
    for arg, default in keyword_defaults(fn):
        try:
            out[arg.arg] = ast.literal_eval(default)
        except ValueError:
            continue
    return out


def set_tunables(source: str, entry_point: str, values: dict[str, Any]) -> str:
    """`source` with the entry point's defaults for `values`' names rewritten, and nothing else
    touched (comments and layout stay). Unknown names raise ValueError."""
    tree = parse_python(source)
    fn = entry_function(tree, entry_point)
    if fn is None:
        raise ValueError(f"the source defines no function {entry_point!r}")
    spans = {}
    for arg, default in keyword_defaults(fn):
        if arg.arg in values:
            spans[arg.arg] = default
    missing = sorted(set(values) - set(spans))
    if missing:
        raise ValueError(f"{entry_point} has no keyword argument(s) {missing} with a default")
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    data = source.encode("utf-8")
    # Replace from the end so earlier offsets stay valid.
    edits = sorted(
        (
            (
                offsets[d.lineno - 1] + d.col_offset,
                offsets[d.end_lineno - 1] + d.end_col_offset,
                repr(values[name]),
            )
            for name, d in spans.items()
        ),
        reverse=True,
    )
    for start, end, text in edits:
        data = data[:start] + text.encode("utf-8") + data[end:]
    return data.decode("utf-8")


def search_space(
    meta: dict[str, Any] | None, entry_defaults: dict[str, Any]
) -> dict[str, list[Any]]:
    """The tunables the search may change: listed in KB_META and exposed by the entry point."""
    if not meta or not isinstance(meta.get("tunables"), dict):
        return {}
    return {
        k: list(v)
        for k, v in meta["tunables"].items()
        if k in entry_defaults and isinstance(v, list | tuple)
    }


def declared_space(source: str, entry_point: str) -> dict[str, list[Any]]:
    """The space a search may read from `source`: its KB_META tunables that the entry point
    exposes as keyword arguments with literal defaults ({} when it declares none)."""
    return search_space(kb_meta(source), tunable_values(source, entry_point))


def configuration(source: str, entry_point: str, space: dict[str, list[Any]]) -> dict[str, Any]:
    """The values `source` sets for the tunables of `space` (its entry point's defaults)."""
    return {k: v for k, v in tunable_values(source, entry_point).items() if k in space}


def design_key(source: str, entry_point: str, space: dict[str, list[Any]]) -> str:
    """What `source` is with its configuration set aside: a short hash of the source with the
    defaults of `space`'s tunables blanked, so two configurations of one kernel share it and a
    kernel changed in any other way does not."""
    blank = set_tunables(source, entry_point, dict.fromkeys(space)) if space else source
    return hashlib.sha256(blank.encode("utf-8")).hexdigest()[:12]
