"""Shrinking an imported problem's sizes for the CPU interpreter.

KernelBench files size their inputs with module-level integer constants (`batch_size = 16`,
`dim = 16384`) that `get_inputs()` / `get_init_inputs()` read by name. Those constants -- found
in the syntax tree, following module-level assignments (`N = 2 * M`) back to literals -- are the
task's dims. On the CPU each one above the cap is halved (a right shift) until it fits, so
powers of two stay powers of two (divisibility between them survives) and odd sizes stay odd-ish
tails; constants at or below the cap (kernel sizes, strides, small batches) are kept. The file is
then run again with the new literals, so derived constants follow.
"""

from __future__ import annotations

import ast
import copy

SIZE_CAP = 64  # the first cap tried; halved while the inputs are over the CPU budget
MIN_CAP = 4


def int_constants(tree: ast.Module) -> dict[str, int]:
    """Module-level `name = <int literal>` (or annotated) assignments; the last one wins."""
    out: dict[str, int] = {}
    for stmt in tree.body:
        target, value = _simple_assignment(stmt)
        if target is None:
            continue
        if isinstance(value, ast.Constant) and type(value.value) is int:
            out[target] = value.value
        else:
            out.pop(target, None)  # rebound to something else: not a size constant
    return out


def names_read(tree: ast.Module, roots: tuple[str, ...]) -> set[str]:
    """Names the top-level functions `roots` read, and, transitively, the names read by the
    module-level assignments that bind them."""
    bodies: dict[str, list[ast.AST]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name in roots:
            bodies.setdefault(stmt.name, []).append(stmt)
        target, value = _simple_assignment(stmt)
        if target is not None and value is not None:
            bodies.setdefault(f"={target}", []).append(value)
    todo = [node for r in roots for node in bodies.get(r, [])]
    seen: set[str] = set()
    while todo:
        node = todo.pop()
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in seen:
                seen.add(n.id)
                todo.extend(bodies.get(f"={n.id}", []))
    return seen


def size_constants(tree: ast.Module, roots: tuple[str, ...]) -> dict[str, int]:
    """The integer constants that size what `roots` build: the task's dims."""
    used = names_read(tree, roots)
    return {name: v for name, v in int_constants(tree).items() if name in used}


def shrink_value(value: int, cap: int) -> int:
    """`value` halved until it is at most `cap` (>= 1): 16384 -> 64, 4095 -> 63, 3 -> 3."""
    while value > cap:
        value >>= 1
    return value


def shrink(dims: dict[str, int], cap: int) -> dict[str, int]:
    return {name: shrink_value(v, cap) for name, v in dims.items()}


def with_constants(tree: ast.Module, values: dict[str, int]) -> ast.Module:
    """A copy of `tree` whose module-level literal assignments to `values`' names hold the new
    values."""
    new = copy.deepcopy(tree)
    for stmt in new.body:
        target, value = _simple_assignment(stmt)
        if target in values and isinstance(value, ast.Constant):
            value.value = values[target]
    return new


def describe(before: dict[str, int], after: dict[str, int]) -> str:
    """The constants that changed, e.g. "batch_size 16→2, dim 16384→64"."""
    return ", ".join(f"{k} {before[k]}→{after[k]}" for k in before if before[k] != after[k])


def _simple_assignment(stmt: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        return stmt.targets[0].id, stmt.value
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return stmt.target.id, stmt.value
    return None, None
