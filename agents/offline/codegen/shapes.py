"""Shapes for `agents.offline.codegen.translate`: what the kernel iterates over, what each tensor is to it, and how
the launcher computes sizes from its inputs.

The problem's shape D is the largest tensor the reference reduces (its last dim is the row), or
without reductions its largest output; N = D[-1] is the row length, R = numel(D) / N the number of
rows. Against D every tensor has a `Kind`, the same at every traced shape:

- full:   numel(D) elements in row-major order (D itself, or a view of it: the kernel reads every
          full tensor flat, element r * N + c);
- row:    one value per row (shape D[:-1] or D[:-1] + (1,));
- col:    one value per column ([N], or [1, ..., 1, N]), broadcast over the rows;
- scalar: one element;
- batch:  varying over the first k < len(D) - 1 dims only, along the row or not ([B, 1, N] or
          [B, 1, 1] in a [B, S, N] problem): consecutive groups of rows share it;
- wide:   an input with D's rows and another row length ([R, 2N] split in halves, say): read only
          through slices of its last dim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch.fx import GraphModule, Node

from agents.offline.codegen.ops import ARG_REDUCTIONS, REDUCTIONS, NotSupported


@dataclass(frozen=True)
class Kind:
    """A tensor against the problem's shape D: it varies over the first `lead` of D's
    `rank` = len(D) - 1 row dims, and along the row (the last dim) when `col`."""

    lead: int
    col: bool
    rank: int
    wide: bool = False

    @property
    def name(self) -> str:
        if self.wide:
            return "wide"
        if self.lead == self.rank:
            return "full" if self.col else ("row" if self.rank else "scalar")
        if self.lead == 0:
            return "col" if self.col else "scalar"
        return "batch_col" if self.col else "batch_row"

    @property
    def tile(self) -> bool:
        """Held as a vector over the columns (else one value per row)."""
        return self.col and not self.wide


def tensor_vals(node: Node) -> list[Any]:
    val = node.meta.get("val")
    vals = val if isinstance(val, tuple | list) else [val]
    return [v for v in vals if isinstance(v, torch.Tensor)]


def packet(node: Node) -> str:
    """The aten op's name without overload ('mul' for aten.mul.Tensor)."""
    p = getattr(node.target, "overloadpacket", None)
    return p.__name__ if p is not None else str(getattr(node.target, "__name__", node.target))


def is_reduction(node: Node) -> bool:
    if node.op != "call_function":
        return False
    name = packet(node)
    over_dim = name in ("max", "min") and getattr(node.target, "_overloadname", "") == "dim"
    return name in REDUCTIONS or name in ARG_REDUCTIONS or name == "var_mean" or over_dim


def reduced_range(node: Node) -> tuple[int, int] | None:
    """For a reduction over the contiguous dims [k, j) of its input, (k, j) ((0, ndim): the
    whole tensor); None for other dims."""
    ndim = node.args[0].meta["val"].dim()
    dims = node.args[1] if len(node.args) > 1 else None
    dims = [dims] if isinstance(dims, int) else dims
    if not dims:  # sum(), mean(), sum(x, []): every dim
        return 0, ndim
    if ndim == 0:
        return None
    dims = sorted({d % ndim for d in dims})
    if dims == list(range(dims[0], dims[-1] + 1)):
        return dims[0], dims[-1] + 1
    # a reduced dim of size 1 moves nothing: instance norm reduces (1, N * C, H, W) over
    # (0, 2, 3), rows of H * W; the run is the dims of size > 1, widened over reduced dims
    shape = tuple(node.args[0].meta["val"].shape)
    big = [d for d in dims if shape[d] != 1]
    if not big:
        return None
    k, j = big[0], big[-1] + 1
    if any(d not in dims and shape[d] != 1 for d in range(k, j)):
        return None
    while k > 0 and k - 1 in dims:
        k -= 1
    while j < ndim and j in dims:
        j += 1
    return k, j


def reduced_ends(node: Node) -> tuple[int, int] | None:
    """For a reduction over the leading dims [0, a) and the trailing dims [b, ndim) of its
    input (0 < a < b < ndim), (a, b): the kept dims lie between them (batch norm reduces
    (N, C, H, W) over (0, 2, 3), one row of N * H * W elements per channel); None otherwise."""
    ndim = node.args[0].meta["val"].dim()
    dims = node.args[1] if len(node.args) > 1 else None
    dims = [dims] if isinstance(dims, int) else dims
    if not dims or ndim < 3 or reduced_range(node) is not None:
        return None
    dims = sorted({d % ndim for d in dims})
    a = next(i for i in range(ndim + 1) if i not in dims)
    b = next((i for i in range(a, ndim) if i in dims), ndim)
    if a == 0 or b == ndim or dims != [*range(a), *range(b, ndim)]:
        return None
    return a, b


def folded(shape: tuple[int, ...], span: tuple[int, int]) -> tuple[tuple[int, ...], int]:
    """A tensor of `shape` reduced over dims [k, j), seen as rows: (the kept dims and the
    reduced ones folded last, the stride between a row's elements = numel of dims j..)."""
    k, j = span
    return shape[:k] + shape[j:] + (math.prod(shape[k:j]),), math.prod(shape[j:])


def _split_rows(shape: tuple[int, ...], ends: tuple[int, int]) -> tuple[tuple[int, ...], int]:
    """A tensor of `shape` reduced over its leading dims [0, a) and trailing ones [b, ndim):
    (the kept dims, then the reduced ones folded last; the numel of the trailing ones, I: row
    element c lies at (c // I) * (K * I) + c % I from the row's first, K the kept numel)."""
    a, b = ends
    return shape[a:b] + (math.prod(shape[:a]) * math.prod(shape[b:]),), math.prod(shape[b:])


def _reductions(graph: GraphModule) -> list[tuple[tuple[int, ...], tuple[int, int] | None]]:
    """(input shape, reduced dims) of every reduction."""
    return [
        (tuple(n.args[0].meta["val"].shape), reduced_range(n))
        for n in graph.graph.nodes
        if is_reduction(n) and isinstance(n.args[0], Node)
    ]


def _reduced(graph: GraphModule) -> list[tuple[tuple[int, ...], int, int]]:
    """(the reduced input seen as rows, the stride between a row's elements, I of split rows
    (0: not split)) of every reduction."""
    found = []
    for n in graph.graph.nodes:
        if not is_reduction(n) or not isinstance(n.args[0], Node):
            continue
        shape, span = tuple(n.args[0].meta["val"].shape), reduced_range(n)
        ends = reduced_ends(n) if span is None else None
        if span is not None:
            found.append((*folded(shape, span), 0))
        elif ends is not None:
            found.append((_split_rows(shape, ends)[0], 1, _split_rows(shape, ends)[1]))
        else:
            found.append((shape, 1, 0))
    return found


def row_shape(graph: GraphModule) -> tuple[int, ...]:
    """The reduced dims of the largest reduction as they are in its input (a layer norm over
    (C, H, W) reduces rows of C * H * W elements, and its weight has shape (C, H, W)); () when
    nothing is reduced or the dims are not adjacent."""
    found = [(math.prod(s), s, span) for s, span in _reductions(graph) if span is not None]
    if not found:
        return ()
    _, shape, (k, j) = max(found, key=lambda f: f[0])
    return shape[k:j]


def domain(graph: GraphModule) -> tuple[int, ...]:
    """The shape the kernel iterates over: the largest tensor reduced, with the reduced dims
    folded into one and moved last (the row), or without reductions the largest output."""
    shapes = {s for s, _, _ in _reduced(graph)}
    reduced = bool(shapes)
    nodes = list(graph.graph.nodes)
    if not shapes:
        out = nodes[-1].args[0]
        outs = [n for n in (out if isinstance(out, tuple | list) else [out]) if isinstance(n, Node)]
        shapes = {tuple(v.shape) for n in outs for v in tensor_vals(n)}
    if not shapes:
        raise NotSupported("the reference returns no tensor")
    size = max(math.prod(s) for s in shapes)
    biggest = sorted(s for s in shapes if math.prod(s) == size)
    if len(biggest) > 1:
        what = "reduced tensors" if reduced else "outputs"
        raise NotSupported(f"{what} of different shapes with the same size {biggest}")
    return biggest[0]


def row_stride(graph: GraphModule) -> int:
    """The stride between a row's elements in the full tensors: 1 when the reductions run over
    the last dims, else the numel of the dims after the reduced ones (a reduction over dim 1 of
    [B, C, L] reads rows of C elements L apart)."""
    found = _reduced(graph)
    if not found:
        return 1
    size = max(math.prod(s) for s, _, _ in found)
    return next(inner for s, inner, _ in found if math.prod(s) == size)


def row_split(graph: GraphModule) -> int:
    """For rows of a reduction over leading and trailing dims (`reduced_ends`), the numel of
    the trailing ones (I); 0 for every other layout."""
    found = _reduced(graph)
    if not found:
        return 0
    size = max(math.prod(s) for s, _, _ in found)
    return next(split for s, _, split in found if math.prod(s) == size)


def _squeezed(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(n for n in shape if n != 1)


def shape_kinds(shape: tuple[int, ...], d: tuple[int, ...], row: tuple[int, ...] = ()) -> set[Kind]:
    """Which kinds a tensor of `shape` can be in a problem of shape `d` (views that add or drop
    dims of size 1 do not change a kind). `row`: the row's dims as the reduced input has them
    (a tensor of that shape is one value per column)."""
    rank = len(d) - 1
    kinds = set()
    if len(_squeezed(row)) > 1 and _squeezed(shape) == _squeezed(row):
        kinds.add(Kind(0, True, rank))
    if math.prod(shape) == math.prod(d):
        kinds.add(Kind(rank, True, rank))
    for lead in range(rank + 1):
        for col in (False, True):
            pattern = d[:lead] + (d[-1:] if col else ())
            if _squeezed(shape) == _squeezed(pattern):
                kinds.add(Kind(lead, col, rank))
    if rank >= 1 and len(shape) == len(d) and shape[:-1] == d[:-1] and shape[-1] not in (1, d[-1]):
        kinds.add(Kind(rank, True, rank, wide=True))
    return kinds


def aligned_kinds(shape: tuple[int, ...], d: tuple[int, ...], is_input: bool) -> set[Kind]:
    """The kinds whose pattern a tensor's shape is exactly, aligned from the right as torch
    broadcasts it (an input of shape [N] in an [M, N] problem is a vector over the columns
    even when M == N). Only for tensors of the problem's rank, and inputs of a lower one (a
    reduction's result without keepdim is one value per row although it has the rank of one)."""
    if len(shape) > len(d) or (len(shape) < len(d) and not is_input):
        return set()
    aligned = (1,) * (len(d) - len(shape)) + shape
    rank = len(d) - 1
    return {
        Kind(lead, col, rank)
        for lead in range(rank + 1)
        for col in (False, True)
        if aligned == d[:lead] + (1,) * (rank - lead) + ((d[-1],) if col else (1,))
    }


def node_kinds(
    graphs: list[GraphModule],
    domains: list[tuple[int, ...]],
    skip: set[int] | None = None,
    rows: list[tuple[int, ...]] | None = None,
) -> list[Kind | None]:
    """For each node (by position), the one kind it has at every traced shape; None for
    non-tensors and the nodes in `skip` (a matrix multiply's operands). Raises NotSupported for
    a tensor that fits no kind."""
    if len({len(d) for d in domains}) > 1:
        raise NotSupported(f"the problem's number of dims changes with the shape: {domains}")
    per_graph = [list(g.graph.nodes) for g in graphs]
    kinds: list[Kind | None] = []
    options: list[set[Kind]] = []  # the kinds each node could have
    for i, node in enumerate(per_graph[0]):
        if node.op == "output" or not tensor_vals(node) or i in (skip or ()):
            kinds.append(None)
            options.append(set())
            continue
        fits: set[Kind] | None = None
        exact: set[Kind] | None = None
        for g, (nodes, d) in enumerate(zip(per_graph, domains, strict=True)):
            row = rows[g] if rows else ()
            for v in tensor_vals(nodes[i]):
                here = shape_kinds(tuple(v.shape), d, row)
                fits = here if fits is None else fits & here
                aligned = aligned_kinds(tuple(v.shape), d, node.op == "placeholder")
                exact = aligned if exact is None else exact & aligned
        if not fits:
            shape = tuple(tensor_vals(node)[0].shape)
            raise NotSupported(
                f"{describe(node)} has shape {shape} in a problem of shape {domains[0]}: neither "
                "the full size, one value per row, a vector over the last dim, nor a scalar"
            )
        best = (fits & exact) or fits  # a square problem: the shape as torch broadcasts it
        kinds.append(max(best, key=lambda k: (not k.wide, k.lead, k.col)))
        options.append(best)
    _kinds_of_views(per_graph[0], kinds, options)
    return kinds


def _kinds_of_views(nodes: list[Node], kinds: list[Kind | None], options: list[set[Kind]]) -> None:
    """A tensor whose shape fits several kinds (a [B, C, N] input in a [B, C, N, N] problem is
    one value per row, or a vector over the last dim per (B, C)) and that is read only through
    views takes the one kind its views have, where it is one of its own: the view shows how
    the tensor broadcasts (diag_embed reads x.unsqueeze(2), a vector per (B, C)). Users are
    settled before the nodes they read."""
    from agents.offline.codegen.trace import VIEWS

    index = {n: i for i, n in enumerate(nodes)}
    for i in reversed(range(len(nodes))):
        users = list(nodes[i].users)
        if len(options[i]) < 2 or not users:
            continue
        if any(u.op != "call_function" or packet(u) not in VIEWS - {"slice"} for u in users):
            continue
        wanted = {kinds[index[u]] for u in users}
        if len(wanted) == 1 and (kind := next(iter(wanted))) in options[i]:
            kinds[i] = kind


def describe(node: Node) -> str:
    if node.op == "placeholder":
        return f"input {node.name.removesuffix('_1')}"
    return f"the result of aten.{packet(node)}"


def join(kinds: list[Kind]) -> Kind:
    """The kind of an elementwise result of operands of these kinds (broadcasting)."""
    if any(k.wide for k in kinds):
        raise NotSupported("a wide input used whole in an elementwise op")
    return Kind(max(k.lead for k in kinds), any(k.col for k in kinds), kinds[0].rank)


# -- sizes the launcher computes -------------------------------------------------------------------


class Sizes:
    """Expressions for sizes in terms of the entry point's tensor parameters, checked at every
    traced shape. `shapes[t][name]` is parameter `name`'s shape in trace t."""

    def __init__(self, shapes: list[dict[str, tuple[int, ...]]], order: list[str]) -> None:
        self.shapes = shapes
        self.order = order  # parameters to try first

    def dim(self, values: list[int]) -> str:
        """An expression equal to values[t] in every trace t."""
        for name in self.order:
            ndim = len(self.shapes[0][name])
            for j in reversed(range(ndim)):
                dims = [s[name][j] if len(s[name]) == ndim else -1 for s in self.shapes]
                ref = f"{name}.shape[{-1 if j == ndim - 1 else j}]"
                if dims == values:
                    return ref
                if all(v > 1 for v in values) and dims[0] % values[0] == 0:
                    k = dims[0] // values[0]
                    if k > 1 and all(d == v * k for d, v in zip(dims, values, strict=True)):
                        return f"{ref} // {k}"
        for name in self.order:  # trailing dims folded into one row
            ndim = len(self.shapes[0][name])
            for j in range(ndim - 1):
                if all(
                    len(s[name]) == ndim and math.prod(s[name][j:]) == v
                    for s, v in zip(self.shapes, values, strict=True)
                ):
                    return " * ".join(f"{name}.shape[{i}]" for i in range(j, ndim))
        for name in self.order:  # ... and split in k (group norm's rows: C / G * H * W)
            ndim = len(self.shapes[0][name])
            for j in reversed(range(ndim - 1)):  # the fewest dims folded: the smallest k
                folds = [math.prod(s[name][j:]) if len(s[name]) == ndim else 0 for s in self.shapes]
                k = folds[0] // values[0] if values[0] > 0 else 0
                if k > 1 and all(f == v * k for f, v in zip(folds, values, strict=True)):
                    dims = " * ".join(f"{name}.shape[{i}]" for i in range(j, ndim))
                    return f"{dims} // {k}"
        if all(v == values[0] for v in values):
            return str(values[0])
        raise NotSupported(f"a size ({values} at the traced shapes) is no input's dimension")

    def shape(self, shapes: list[tuple[int, ...]], last: tuple[str, list[int]] | None) -> str:
        """An expression for a tensor shape that is shapes[t] in trace t. `last`: (name, values)
        of a size the launcher already holds (N), used for a dimension equal to it."""
        for name in self.order:
            if all(s[name] == shp for s, shp in zip(self.shapes, shapes, strict=True)):
                return f"{name}.shape"
        ndim = len(shapes[0])
        if any(len(s) != ndim for s in shapes):
            raise NotSupported("an output whose number of dims changes with the shape")
        dims = []
        for j in range(ndim):
            values = [s[j] for s in shapes]
            dims.append(last[0] if last and values == last[1] else self.dim(values))
        for name in self.order:
            lead = self.shapes[0][name][:-1]
            if (
                ndim >= 2
                and len(lead) == ndim - 1
                and all(
                    s[name][:-1] == shp[:-1] for s, shp in zip(self.shapes, shapes, strict=True)
                )
            ):
                return f"(*{name}.shape[:-1], {dims[-1]})"
        return "(" + ", ".join(dims) + ("," if ndim == 1 else "") + ")"
