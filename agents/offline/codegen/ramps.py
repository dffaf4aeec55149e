"""Index ramps: `aten.arange` and what is computed from it alone, as an expression of each
element's own index.

`torch.triu`/`torch.tril` trace into a mask built from two aranges (`col - row >= k`),
`torch.diag` of a vector and `torch.diag_embed` into `row == col`, and `x * torch.arange(n)`
into a ramp along the last dim. None of these tensors is read from memory: a *ramp node* (an
arange, or a view, cast or elementwise op whose tensor operands are all ramp nodes and
constants) is a function of the element's coordinates only. It is computed where a node of the
kernel reads it (its *consumer*: an elementwise op, whose shape S the ramp broadcasts to, aligned
from the right as torch broadcasts) from the consumer's element:

- the element's flat index in S: `offs` (pointwise, total), `base + cols` (row, gemm; `cols *
  inner` for rows read strided) for a full-size consumer, `row` for one value per row, `cols`
  for a vector over the last dim, 0 for a scalar;
- its coordinate along S's dim j: (flat // prod(S[j+1:])) % S[j], the sizes kernel arguments the
  launcher computes from its inputs (one kernel for every shape of the class);
- the ramp node's dims mapped onto S's dims through the views between it and the consumer
  (unsqueeze, squeeze, views that add or drop dims of size 1, expand, permute), and an arange's
  value start + step * coordinate (int64, exact, for an integer arange; fp32 for a floating
  one).

Ramp nodes are walked again at each consumer (recursively, `ramp_value`), their statements
shared where the expressions agree. A ramp read by anything but an elementwise op (a reduction,
an index, a matrix multiply's operand) or returned is refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import torch
from torch.fx import Node

from agents.offline.codegen import shapes as shp
from agents.offline.codegen.nodes import _Call
from agents.offline.codegen.ops import ELEMENTWISE, NotSupported
from agents.offline.codegen.trace import CONSTANTS, CONVERSIONS, RAMPS, op_name
from agents.offline.codegen.values import Value, is_var, rounded

if TYPE_CHECKING:
    from agents.offline.codegen.builder import Builder

# views that keep each element's value and only add, drop or broadcast dims of size 1
_RESHAPES = {
    "view",
    "_unsafe_view",
    "reshape",
    "unsqueeze",
    "squeeze",
    "view_copy",
    "unsqueeze_copy",
    "squeeze_copy",
}
_SAME = {"alias", "clone", "detach", "lift_fresh_copy", "contiguous", "alias_copy"}
_EXPANDS = {"expand", "expand_copy"}
# the arange dtypes translated: integers held exactly in int64 (a narrow arange is not wrapped
# past its dtype's range: torch.eye decomposes into uint8 aranges, yet eager torch.eye does not
# wrap at 256), floats in fp32
_RAMP_DTYPES = (
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.float32,
    torch.float16,
    torch.bfloat16,
)

# a node's dims placed on the consumer's: for each dim, the consumer's dim (negative, from the
# right) it runs along, or None where it has size 1 (its coordinate is 0)
Place = tuple[int | None, ...]


class RampsMixin:
    """Builder methods for index ramps; `ramps` holds the ramp nodes, `ramp_cache` the values
    built for them (by node, place and consumer), `ramp_exprs` their statements by text."""

    def find_ramps(self: Builder) -> set[Node]:
        """The nodes computed from aranges and constants only (no input)."""
        ramps: set[Node] = set()
        for node in self.nodes:
            if node.op != "call_function":
                continue
            if shp.packet(node) in RAMPS:
                ramps.add(node)
                continue
            inputs = node.all_input_nodes
            if any(a in ramps for a in inputs) and all(
                a in ramps or _is_constant(a) for a in inputs
            ):
                ramps.add(node)
        return ramps

    def check_ramps(self: Builder) -> None:
        """Ramp nodes are translated by the ops below and read by elementwise ops only."""
        for node in self.ramps:
            name = shp.packet(node)
            if name not in RAMPS | _RESHAPES | _SAME | _EXPANDS | CONVERSIONS | {"permute"} and (
                name not in ELEMENTWISE
            ):
                raise NotSupported(
                    f"aten.{op_name(node)} of an index ramp (aten.arange); ramps go through "
                    "views, casts and elementwise ops only"
                )
            for user in node.users:
                if user in self.ramps:
                    continue
                if user.op == "output":
                    raise NotSupported(
                        "the reference returns a tensor of indices only (an arange); "
                        "the generator returns values computed from its inputs"
                    )
                if shp.packet(user) not in ELEMENTWISE:
                    raise NotSupported(
                        f"aten.{op_name(user)} reads an index ramp (aten.arange); ramps are "
                        "read by elementwise ops only"
                    )

    def bind_ramps(self: Builder, node: Node) -> None:
        """Before elementwise op `node`: the value of each ramp it reads, at its elements."""
        operands = [a for a in node.args if isinstance(a, Node) and a in self.ramps]
        if not operands:
            return
        kind = self.kind(node)
        flat = self._flat_index(node, kind)
        shapes = [tuple(nodes[self.index[node]].meta["val"].shape) for nodes in self.per_graph]
        coords: dict[int, str] = {}

        def coord(dim: int) -> str:
            if dim not in coords:
                coords[dim] = self._coordinate(node, flat, shapes, dim, kind.tile)
            return coords[dim]

        for a in operands:
            value = self.ramp_value(a, self._aligned(a, node), coord)
            self.values[a] = value
            self.kinds[self.index[a]] = kind  # read at the consumer's elements

    def _flat_index(self: Builder, node: Node, kind: shp.Kind) -> str:
        """The consumer's element as its flat (row-major) index in its own shape."""
        if kind.name == "scalar":
            return "0"
        if kind.name == "full":
            if self.structure in ("pointwise", "total"):
                return "offs"
            strided = any(s != 1 for s in self.strides)
            return "base + cols * inner" if strided else "base + cols"
        if kind.name == "row" and self.structure in ("row", "gemm"):
            return "row"
        if kind.name == "col" and self.structure in ("row", "gemm"):
            return "cols.to(tl.int64)"
        raise NotSupported(
            f"aten.{op_name(node)} reads an index ramp (aten.arange) into a {kind.name} tensor; "
            "ramps are read at full-size, per-row, per-column or scalar elements"
        )

    def _coordinate(
        self: Builder, node: Node, flat: str, shapes: list[tuple[int, ...]], dim: int, tile: bool
    ) -> str:
        """The consumer's element's coordinate along its dim `dim` (negative), as a variable."""
        if flat == "0":
            return "0"
        sizes = self.make_sizes()
        size = [s[dim] for s in shapes]
        inner = [math.prod(s[dim + 1 :]) if dim != -1 else 1 for s in shapes]
        expr = flat
        if any(v != 1 for v in inner):
            stride = self._size_text(sizes, inner, [s[dim + 1 :] for s in shapes], "ramp_stride")
            expr = f"{_paren(expr)} // {stride}"
        if any(len(s) + dim > 0 for s in shapes):  # not the leading dim: wrap around it
            expr = f"{_paren(expr)} % {self._size_text(sizes, size, None, 'ramp_size')}"
        return self._ramp_stmt(expr, tile, op_name(node))

    def _size_text(
        self: Builder,
        sizes: shp.Sizes,
        values: list[int],
        dims: list[tuple[int, ...]] | None,
        stem: str,
    ) -> str:
        """Kernel text for a size that is `values[t]` in trace t: a literal, or a kernel argument
        the launcher computes (an input's dim; else the product of `dims`' sizes)."""
        try:
            expr = sizes.dim(values)
        except NotSupported:
            if dims is None:
                raise
            expr = " * ".join(f"({sizes.dim([d[j] for d in dims])})" for j in range(len(dims[0])))
        if expr.isdigit():
            return expr
        return self.size_arg(stem, expr)

    def _ramp_stmt(self: Builder, expr: str, tile: bool | None, note: str) -> str:
        """A statement shared by every ramp value that computes `expr` (a tile as `add` says)."""
        if expr not in self.ramp_exprs:
            self.ramp_exprs[expr] = self.add(expr, tile, note)
        return self.ramp_exprs[expr]

    def _aligned(self: Builder, operand: Node, node: Node) -> Place:
        """The place of an operand broadcast to `node`'s shape (aligned from the right)."""
        out = [tuple(shp.tensor_vals(n[self.index[node]])[0].shape) for n in self.per_graph]
        return self._broadcast(operand, [(tuple(range(-len(s), 0))) for s in out], out)

    def _broadcast(
        self: Builder,
        operand: Node,
        places: list[tuple[int | None, ...]],
        shapes: list[tuple[int, ...]],
    ) -> Place:
        """The place of `operand` broadcast (from the right) to a node of `shapes[t]` placed at
        `places[t]` in trace t; the same in every trace, or NotSupported."""
        found = set()
        for t, nodes in enumerate(self.per_graph):
            mine = tuple(shp.tensor_vals(nodes[self.index[operand]])[0].shape)
            off = len(shapes[t]) - len(mine)
            found.add(tuple(None if n == 1 else places[t][i + off] for i, n in enumerate(mine)))
        return self._one_place(operand, found)

    def _one_place(self: Builder, node: Node, found: set[Place]) -> Place:
        if len(found) != 1:
            raise NotSupported(
                f"aten.{op_name(node)} places an index ramp on different dims at different "
                "shapes (a dim of size 1 at some); one kernel cannot follow it"
            )
        return next(iter(found))

    # -- a ramp node's value at the consumer's element
    def ramp_value(self: Builder, node: Node, place: Place, coord: Callable[[int], str]) -> Value:
        """`node`'s value at the consumer's element, its dims at `place` (`coord(dim)`: the
        element's coordinate along the consumer's dim)."""
        if not isinstance(node, Node) or node not in self.ramps:
            return self.value(node)
        key = (node, place, coord)  # coord: one per consumer, held here (no id reused)
        if key in self.ramp_cache:
            return self.ramp_cache[key]
        name = shp.packet(node)
        note = op_name(node)
        shapes = [tuple(shp.tensor_vals(n[self.index[node]])[0].shape) for n in self.per_graph]
        if name in RAMPS:
            value = self._arange(node, place, coord)
        elif name in _SAME:
            value = self.ramp_value(node.args[0], place, coord)
        elif name in CONVERSIONS:
            src = self.ramp_value(node.args[0], place, coord)
            value = self.converted(src, self.dtype_of(node), note)
        elif name in _RESHAPES | _EXPANDS | {"permute"}:
            value = self.ramp_value(node.args[0], self._view_place(node, place, shapes), coord)
        else:  # elementwise: its ramp operands at their broadcast places, then the op
            places = [place] * len(shapes)
            for a in node.args:
                if isinstance(a, Node) and a in self.ramps:
                    self.values[a] = self.ramp_value(a, self._broadcast(a, places, shapes), coord)
            dtype = self.dtype_of(node)
            expr = rounded(ELEMENTWISE[name](_Call(self, node)), dtype)
            if not is_var(expr):
                expr = self._ramp_stmt(expr, None, note)
            value = Value(expr, dtype)
        self.ramp_cache[key] = value
        return value

    def _view_place(
        self: Builder, node: Node, place: Place, shapes: list[tuple[int, ...]]
    ) -> Place:
        """The place of a view's source, from the view's own place."""
        src = node.args[0]
        name = shp.packet(node)
        found = set()
        for t, nodes in enumerate(self.per_graph):
            have = tuple(shp.tensor_vals(nodes[self.index[src]])[0].shape)
            if name == "permute":
                order = [d % len(have) for d in self.arg_at(t, node, 1)]
                mine: list[int | None] = [None] * len(have)
                for i, d in enumerate(order):
                    mine[d] = place[i]
                found.add(tuple(None if have[i] == 1 else p for i, p in enumerate(mine)))
            elif name in _EXPANDS:
                off = len(shapes[t]) - len(have)
                found.add(tuple(None if n == 1 else place[i + off] for i, n in enumerate(have)))
            else:  # dims of size 1 added or dropped: the others keep their order
                kept = [p for p, n in zip(place, shapes[t], strict=True) if n != 1]
                if [n for n in have if n != 1] != [n for n in shapes[t] if n != 1]:
                    raise NotSupported(
                        f"aten.{op_name(node)} reshapes an index ramp (dims {have} to "
                        f"{shapes[t]}); only dims of size 1 may be added or dropped"
                    )
                it = iter(kept)
                found.add(tuple(None if n == 1 else next(it) for n in have))
        return self._one_place(node, found)

    def _arange(self: Builder, node: Node, place: Place, coord: Callable[[int], str]) -> Value:
        """start + step * (the element's coordinate along the arange's dim)."""
        overload = op_name(node).split(".")[1]
        start = "0" if overload == "default" else self.num(node, 0)
        step = self.num(node, 2, 1) if overload == "start_step" else "1"
        dtype = self.dtype_of(node)
        if dtype not in _RAMP_DTYPES:
            raise NotSupported(
                f"aten.{op_name(node)} makes {dtype} values; ramps of "
                f"{', '.join(str(d).removeprefix('torch.') for d in _RAMP_DTYPES)} are translated"
            )
        (dim,) = place
        at = "0" if dim is None else coord(dim)
        if dtype.is_floating_point:  # int64 coordinates, the values in fp32
            at = f"{at}.to(tl.float32)" if is_var(at) else f"{at}.0"
        expr = at if step in ("1", "1.0") else f"{step} * {at}"
        expr = rounded(expr if start in ("0", "0.0") else f"{start} + {expr}", dtype)
        if not is_var(expr):
            expr = self._ramp_stmt(expr, None, op_name(node))
        return Value(expr, dtype)


def _is_constant(node: Node) -> bool:
    """A constant the graph builds from numbers (scalar_tensor, full): no tensor input."""
    return node.op == "call_function" and shp.packet(node) in CONSTANTS and not node.all_input_nodes


def _paren(expr: str) -> str:
    return f"({expr})" if " " in expr else expr
