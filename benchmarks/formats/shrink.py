"""The sizes of an imported problem, found in its syntax tree, and shrinking them for the CPU.

KernelBench files size their inputs with module-level constants that `get_inputs()` /
`get_init_inputs()` read by name, written in several idioms, and sometimes with literals inside
`get_inputs` itself. Each integer that sizes the problem is a *site*, and each site is one dim
of the task:

    batch_size = 16                      dim batch_size
    N = 2048 * 2                         dim N = 4096 (an expression of literals, folded)
    height = width = 128                 dims height, width (a chained assignment)
    d, h, w = 16, 32, 32                 dims d, h, w (a tuple assignment)
    input_shape = (32768,)               dim input_shape[0] (a tuple literal)
    def get_inputs():
        return [torch.randn(16, 16384)]  dims get_inputs.randn0[0], get_inputs.randn0[1]

Module-level names count when the root functions read them, directly or through other
module-level assignments (`cols = 4 * block` makes `block` a dim and `cols` follow it); literals
count where they are the size arguments of a tensor constructor (`torch.randn`, `rand`, `zeros`,
`ones`, `empty`, `full`, `randint`'s size) inside `get_inputs`.

Shrinking halves a value (a right shift) until it is at most a cap, so powers of two stay powers
of two and divisibility between them survives; values at or below the cap (kernel sizes, strides,
small batches) are kept. `with_sizes` writes new values back into a copy of the tree (splitting a
chained or tuple assignment where its names now differ), and the file is run again, so derived
constants follow. The search for sizes that build, run and fit the CPU budget lives in
`benchmarks.formats.cpu_sizes`.
"""

from __future__ import annotations

import ast
import copy
import operator
from dataclasses import dataclass

SIZE_CAP = 64  # the first cap tried; halved while the problem is over the CPU budget
MIN_CAP = 4
CONSTRUCTORS = ("randn", "rand", "zeros", "ones", "empty", "full", "randint")
MIN_SITE = 2  # a literal 0 or 1 in a constructor is a flag or a unit axis, never a size

_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}


@dataclass(frozen=True)
class Site:
    """One integer that sizes the problem: the dim it is, its value, and where it is written."""

    name: str  # the dim's name
    value: int
    line: int
    kind: str  # "constant", "chained", "tuple", "tuple literal", "get_inputs literal"


def fold(node: ast.expr | None) -> int | None:
    """The value of an expression made of integer literals and arithmetic only, else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = fold(node.operand)
        if inner is None:
            return None
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = fold(node.left), fold(node.right)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Pow) and not 0 <= right <= 64:
            return None
        try:
            value = _BINOPS[type(node.op)](left, right)
        except (ZeroDivisionError, ValueError, OverflowError):
            return None
        return value if isinstance(value, int) and abs(value) < 1 << 62 else None
    return None


def _targets_and_value(stmt: ast.stmt) -> tuple[list[ast.expr], ast.expr | None]:
    if isinstance(stmt, ast.Assign):
        return list(stmt.targets), stmt.value
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return [stmt.target], stmt.value
    return [], None


def _bindings(stmt: ast.stmt) -> list[tuple[str, ast.expr | None, str]]:
    """(name, the expression bound to it or None when unknown, idiom) for each module-level name
    a statement binds."""
    targets, value = _targets_and_value(stmt)
    out: list[tuple[str, ast.expr | None, str]] = []
    chained = len(targets) > 1
    for target in targets:
        if isinstance(target, ast.Name):
            out.append((target.id, value, "chained" if chained else "constant"))
        elif isinstance(target, ast.Tuple | ast.List):
            elts = value.elts if isinstance(value, ast.Tuple | ast.List) else None
            for i, t in enumerate(target.elts):
                if isinstance(t, ast.Name):
                    v = elts[i] if elts is not None and len(elts) == len(target.elts) else None
                    out.append((t.id, v, "tuple"))
    return out


def module_sites(tree: ast.Module) -> dict[str, Site]:
    """Module-level integer constants, in every idiom above; the last binding of a name wins
    (rebound to anything else, it is not a size)."""
    out: dict[str, Site] = {}
    for stmt in tree.body:
        for name, value, kind in _bindings(stmt):
            for key in [k for k in out if k == name or k.startswith(f"{name}[")]:
                del out[key]
            folded = fold(value)
            if folded is not None:
                out[name] = Site(name, folded, stmt.lineno, kind)
            elif isinstance(value, ast.Tuple | ast.List) and kind != "tuple":
                for i, elt in enumerate(value.elts):
                    v = fold(elt)
                    if v is not None:
                        out[f"{name}[{i}]"] = Site(f"{name}[{i}]", v, stmt.lineno, "tuple literal")
    return out


def names_read(tree: ast.Module, roots: tuple[str, ...]) -> set[str]:
    """Names the top-level functions `roots` read, and, transitively, the names read by the
    module-level assignments that bind them."""
    bodies: dict[str, list[ast.AST]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name in roots:
            bodies.setdefault(stmt.name, []).append(stmt)
        for name, value, _ in _bindings(stmt):
            if value is not None:
                bodies.setdefault(f"={name}", []).append(value)
    todo = [node for r in roots for node in bodies.get(r, [])]
    seen: set[str] = set()
    while todo:
        node = todo.pop()
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in seen:
                seen.add(n.id)
                todo.extend(bodies.get(f"={n.id}", []))
    return seen


def _size_args(call: ast.Call, creator: str) -> list[ast.expr]:
    """The expressions of a constructor call that hold its sizes."""
    if creator == "randint":  # randint(high, size) or randint(low, high, size)
        pos = [a for a in call.args[1:3] if isinstance(a, ast.Tuple | ast.List)]
    elif creator == "full":
        pos = call.args[:1]
    else:
        pos = list(call.args)
    pos += [k.value for k in call.keywords if k.arg == "size"]
    out: list[ast.expr] = []
    for node in pos:
        out.extend(node.elts if isinstance(node, ast.Tuple | ast.List) else [node])
    return out


def _creator(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in CONSTRUCTORS:
        if isinstance(func.value, ast.Name) and func.value.id == "torch":
            return func.attr
    return None


def _literal_nodes(tree: ast.Module, fn_name: str) -> list[tuple[str, ast.Constant]]:
    """(dim name, literal) for the size literals of tensor constructors inside `fn_name`."""
    out: list[tuple[str, ast.Constant]] = []
    counts: dict[str, int] = {}
    for stmt in tree.body:
        if not (isinstance(stmt, ast.FunctionDef) and stmt.name == fn_name):
            continue
        calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call) and _creator(n)]
        calls.sort(key=lambda n: (n.lineno, n.col_offset))
        for call in calls:
            creator = _creator(call) or ""
            k = counts.get(creator, 0)
            counts[creator] = k + 1
            for i, node in enumerate(_size_args(call, creator)):
                if (
                    isinstance(node, ast.Constant)
                    and type(node.value) is int
                    and node.value >= MIN_SITE
                ):
                    out.append((f"{fn_name}.{creator}{k}[{i}]", node))
    return out


def sites(tree: ast.Module, roots: tuple[str, ...], literal_roots: tuple[str, ...]) -> list[Site]:
    """Every site that sizes what `roots` build: module constants they read, then size literals
    in `literal_roots`."""
    used = names_read(tree, roots)
    found = [s for name, s in module_sites(tree).items() if name.split("[", 1)[0] in used]
    for fn_name in literal_roots:
        for name, node in _literal_nodes(tree, fn_name):
            found.append(Site(name, node.value, node.lineno, "get_inputs literal"))
    return found


def size_constants(tree: ast.Module, roots: tuple[str, ...]) -> dict[str, int]:
    """The dims of a problem: each site's name and value."""
    return {s.name: s.value for s in sites(tree, roots, ("get_inputs",))}


def shrink_value(value: int, cap: int) -> int:
    """`value` halved until it is at most `cap` (>= 1): 16384 -> 64, 4095 -> 63, 3 -> 3."""
    while value > cap:
        value >>= 1
    return value


def shrink(dims: dict[str, int], cap: int, pinned: dict[str, int] | None = None) -> dict[str, int]:
    """Every dim shrunk to `cap`, except the `pinned` ones, which take their pinned value."""
    pinned = pinned or {}
    return {name: pinned.get(name, shrink_value(v, cap)) for name, v in dims.items()}


def with_sizes(tree: ast.Module, values: dict[str, int]) -> ast.Module:
    """A copy of `tree` whose sites named in `values` hold the new values."""
    new = copy.deepcopy(tree)
    body: list[ast.stmt] = []
    for stmt in new.body:
        body.extend(_rewrite_statement(stmt, values))
    new.body = body
    for fn_name in ("get_inputs",):
        for name, node in _literal_nodes(new, fn_name):
            if name in values:
                node.value = values[name]
    return ast.fix_missing_locations(new)


def _rewrite_statement(stmt: ast.stmt, values: dict[str, int]) -> list[ast.stmt]:
    bound = _bindings(stmt)
    names = {name for name, _, _ in bound}
    touched = {k for k in values if k.split("[", 1)[0] in names}
    if not touched:
        return [stmt]
    targets, value = _targets_and_value(stmt)
    if len(targets) == 1 and isinstance(targets[0], ast.Name):
        name = targets[0].id
        if name in values and fold(value) is not None:
            _set_value(stmt, ast.Constant(values[name]))
            return [stmt]
        if isinstance(value, ast.Tuple | ast.List):
            for i, elt in enumerate(value.elts):
                if f"{name}[{i}]" in values and fold(elt) is not None:
                    value.elts[i] = ast.copy_location(ast.Constant(values[f"{name}[{i}]"]), elt)
            return [stmt]
        return [stmt]
    # a chained or tuple assignment: one statement per name, in order, each with its own value
    out: list[ast.stmt] = []
    for name, v, _ in bound:
        if name in values and fold(v) is not None:
            new_value: ast.expr = ast.Constant(values[name])
        elif v is not None:
            new_value = copy.deepcopy(v)
        else:
            return [stmt]  # a tuple unpacked from something else: left as written
        out.append(
            ast.copy_location(
                ast.Assign(targets=[ast.Name(name, ast.Store())], value=new_value), stmt
            )
        )
    return out


def _set_value(stmt: ast.stmt, value: ast.expr) -> None:
    if isinstance(stmt, ast.Assign | ast.AnnAssign):
        stmt.value = ast.copy_location(value, stmt.value) if stmt.value is not None else value


def describe(before: dict[str, int], after: dict[str, int]) -> str:
    """The dims that changed, e.g. "batch_size 16→2, dim 16384→64"."""
    return ", ".join(f"{k} {before[k]}→{after[k]}" for k in before if before[k] != after[k])
