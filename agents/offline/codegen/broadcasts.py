"""Broadcast inputs: an input broadcast over the problem in a pattern no `shapes.Kind` names,
loaded at an index computed from each element's flat offset.

A kind says how a tensor varies against the problem's shape D (full, per row, per column...).
Some inputs fit none: group norm's per-channel weight (C,), viewed as (1, C, 1, 1) and
multiplied into an (N, C, H, W) tensor whose rows are the (sample, group) pairs, changes every
H * W columns and with the row; a (N,) vector broadcast over the last dim of an (M, N) input
inside a mean of everything meets a problem of shape (M * N,). Such an input is read, through
views and widening casts only (the *chain*), by elementwise ops whose result has the problem's
size (a shape S with numel(D) elements: the kernel reads it flat). For each element, its flat
offset e in S (pointwise and total: `offs`; row: `base + cols`, times `inner` where rows are
strided) is decoded into the coordinates of S that the input does not broadcast over, and the
input is loaded at sum(coordinate * stride): coordinate j = (e // prod(S[j+1:])) % S[j], the
strides those of the chain's last view over the (contiguous) input, from the traced metadata.
Every size and stride is a kernel argument the launcher computes from its tensors, so one
kernel serves every shape of its class. Nothing is cached: each element loads its own value
(the input is small; the loads hit the cache).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
from torch.fx import Node

from agents.offline.codegen import emit
from agents.offline.codegen import shapes as shp
from agents.offline.codegen.ops import ELEMENTWISE, NotSupported
from agents.offline.codegen.trace import CONVERSIONS, SELECTS, VIEWS, op_name
from agents.offline.codegen.values import Value

if TYPE_CHECKING:
    from agents.offline.codegen.builder import Builder

# views that keep the elements' order, and selects (one index along a dim: `w[:, k]`, read at
# the select's storage offset)
_CHAIN_VIEWS = (VIEWS - {"slice", "permute"}) | SELECTS
# views whose traced strides describe the input's memory whatever its layout; the others
# (reshape, clone, casts...) must read a contiguous tensor, whose order they keep
_PURE_VIEWS = {"expand", "unsqueeze", "squeeze", "alias", "detach", "select"}


class BroadcastMixin:
    """Builder methods for broadcast inputs; `broadcasts` maps each node of a chain (the input
    too) to its input, `broadcast_ends` holds the chain nodes read by elementwise ops."""

    # -- before the kinds: which inputs are broadcast inputs
    def find_broadcasts(self: Builder, skip: set[int], rows: list[tuple[int, ...]]) -> set[Node]:
        """The inputs (with their chains) that fit no kind at every traced shape and are read
        through views and widening casts by elementwise ops only; fills `broadcasts`."""
        for node in self.nodes:
            if node.op != "placeholder" or not node.users or self.index[node] in skip:
                continue
            if not isinstance(node.meta.get("val"), torch.Tensor) or self._fits_a_kind(node, rows):
                continue
            chain = self._chain(node)
            if chain is not None:
                self.broadcasts.update({n: node for n in chain})
        self.broadcast_ends = {
            n for n in self.broadcasts if any(u not in self.broadcasts for u in n.users)
        }
        return set(self.broadcasts)

    def _fits_a_kind(self: Builder, node: Node, rows: list[tuple[int, ...]]) -> bool:
        fits: set[shp.Kind] | None = None
        for g, nodes in enumerate(self.per_graph):
            shape = tuple(nodes[self.index[node]].meta["val"].shape)
            here = shp.shape_kinds(shape, self.domains[g], rows[g] if rows else ())
            fits = here if fits is None else fits & here
        return bool(fits)

    def _chain(self: Builder, node: Node) -> list[Node] | None:
        """`node` and the views and casts that read it, transitively, when everything else
        that reads them is an elementwise op; None otherwise (the input stays refused by its
        shape). The input must be contiguous (its views' strides are then its layout's) and
        its casts widen floats (the loads convert to fp32)."""
        src = self.dtype_of(node)
        chain, todo = [node], [node]
        while todo:
            for user in todo.pop().users:
                name = shp.packet(user) if user.op == "call_function" else ""
                if name in _CHAIN_VIEWS or name in CONVERSIONS:
                    if name in CONVERSIONS and self.dtype_of(user) not in (
                        src,
                        torch.float32,
                        torch.float64,
                    ):
                        return None
                    if user not in chain:
                        chain.append(user)
                        todo.append(user)
                elif name not in ELEMENTWISE or not self._full_size(user):
                    return None
        for nodes in self.per_graph:
            vals = [nodes[self.index[n]].meta["val"] for n in chain]
            # an offset only where a select makes one (its index times its dim's stride)
            offset = [
                v.storage_offset() != 0 and not self._selected(n)
                for n, v in zip(chain, vals, strict=True)
            ]
            if not vals[0].is_contiguous() or any(offset):
                return None
            for n in chain[1:]:
                if shp.packet(n) in _PURE_VIEWS:
                    continue
                if not nodes[self.index[n.args[0]]].meta["val"].is_contiguous():
                    return None
        return chain

    @staticmethod
    def _selected(node: Node) -> bool:
        """Whether a select lies on the way from the chain's input to `node` (or is `node`)."""
        while isinstance(node, Node) and node.op == "call_function":
            if shp.packet(node) in SELECTS:
                return True
            node = node.args[0]
        return False

    def _full_size(self: Builder, node: Node) -> bool:
        """Whether `node` has the problem's element count at every traced shape."""
        return all(
            shp.tensor_vals(nodes[self.index[node]])[0].numel() == math.prod(d)
            for nodes, d in zip(self.per_graph, self.domains, strict=True)
        )

    def broadcast_input(self: Builder, node: Node, name: str) -> None:
        """A broadcast input's parameter: passed as a pointer, loaded by its chain's ends."""
        var = emit.safe_name(name, self.taken | self.vars)
        self.vars.add(var)
        param = emit.Param(name, var, "broadcast", self.dtype_of(node))
        self.prog.inputs.append(param)
        self.input_params[node] = param

    def broadcast_kinds(self: Builder) -> None:
        """The chains' last views are full-size tiles to the ops that read them."""
        rank = len(self.domains[0]) - 1
        for end in self.broadcast_ends:
            self.kinds[self.index[end]] = shp.Kind(rank, True, rank)

    # -- the walk
    def broadcast_value(self: Builder, end: Node) -> None:
        """The value of a chain's last view at each element: a load at the index its
        coordinates in the readers' shape S give (see the module docstring)."""
        note = op_name(end)
        if self.structure not in ("pointwise", "row", "total"):
            raise NotSupported(
                f"{shp.describe(self.broadcasts[end])} is broadcast in a pattern no kind names "
                f"(loaded at computed indices) in a {self.structure} kernel; only pointwise, row "
                "and whole-tensor kernels load such inputs"
            )
        readers = [u for u in end.users if u not in self.broadcasts]
        for u in readers:
            if self.kind(u).name != "full":
                raise NotSupported(
                    f"aten.{op_name(u)} broadcasts {shp.describe(self.broadcasts[end])} into a "
                    f"{self.kind(u).name} tensor; such inputs feed full-size results only"
                )
        targets = []  # S per trace
        layouts = []  # (shape, strides) of the chain's end per trace, aligned to S
        offsets = []  # the chain's end's storage offset per trace (a select's)
        for nodes in self.per_graph:
            shapes = {tuple(nodes[self.index[u]].meta["val"].shape) for u in readers}
            if len(shapes) != 1:
                raise NotSupported(
                    f"{shp.describe(self.broadcasts[end])} is broadcast into results of "
                    f"different shapes {sorted(shapes)}"
                )
            (target,) = shapes
            val = nodes[self.index[end]].meta["val"]
            pad = len(target) - val.dim()
            if pad < 0:
                raise NotSupported(f"aten.{note} has more dims than the results it feeds")
            layouts.append(((1,) * pad + tuple(val.shape), (0,) * pad + tuple(val.stride())))
            offsets.append(int(val.storage_offset()))
            targets.append(target)
        if len({len(t) for t in targets}) != 1:
            raise NotSupported(
                "a broadcast input's result changes its number of dims with the shape"
            )
        index = self._broadcast_index(end, targets, layouts)
        if any(offsets):
            sizes = self.make_sizes()
            if len(set(offsets)) == 1:  # the same in every trace: a literal
                at = str(offsets[0])
            else:
                at = self.size_arg("spread_offset", sizes.dim(offsets))
            index = self.let_tile(f"{index} + {at}", note)
        param = self.input_params[self.broadcasts[end]]
        other = "0.0" if param.dtype.is_floating_point else "0"
        load = f"tl.load({param.name}_ptr + {index}, mask=mask, other={other})"
        if param.dtype.is_floating_point:
            load += ".to(tl.float32)"
        self.values[end] = Value(self.add(load, True, note), self.dtype_of(end))

    def _broadcast_index(
        self: Builder,
        end: Node,
        targets: list[tuple[int, ...]],
        layouts: list[tuple[tuple[int, ...], tuple[int, ...]]],
    ) -> str:
        """The kernel text of the input's index for the element at flat offset e of S."""
        note = op_name(end)
        ndim = len(targets[0])
        sizes = self.make_sizes()
        flat = self._flat_offset(note)
        terms = []
        for j in range(ndim):
            kept = [
                shape[j] != 1 and stride[j] != 0 and target[j] != 1
                for target, (shape, stride) in zip(targets, layouts, strict=True)
            ]
            broadcast = [
                target[j] != 1 and (shape[j] == 1 or stride[j] == 0)
                for target, (shape, stride) in zip(targets, layouts, strict=True)
            ]
            if not any(kept):
                continue
            if any(broadcast):
                raise NotSupported(
                    f"{shp.describe(self.broadcasts[end])} is broadcast over dim {j} at some "
                    "traced shapes and not at others"
                )
            inner = [math.prod(t[j + 1 :]) for t in targets]
            coord = flat
            if any(v != 1 for v in inner):
                inner_arg = self.divided_by(self.size_arg("spread_inner", sizes.dim(inner)))
                coord = f"({coord} // {inner_arg})"
            if j > 0:
                dim_arg = self.size_arg("spread_dim", sizes.dim([t[j] for t in targets]))
                coord = f"{coord} % {self.divided_by(dim_arg)}"
            strides = [stride[j] for _, stride in layouts]
            if any(s != 1 for s in strides):
                coord = f"({coord}) * {self.size_arg('spread_stride', sizes.dim(strides))}"
            terms.append(coord)
        return self.let_tile(" + ".join(terms) if terms else "0", note)

    def _flat_offset(self: Builder, note: str) -> str:
        """The element's flat offset in the full tensors, as each structure reads them."""
        if self.structure in ("pointwise", "total"):
            return "offs"
        step = " * inner" if any(s != 1 for s in self.strides) else ""
        if any(self.splits):  # as `emit._step` writes it
            step = " // split * split_stride + cols % split"
        return self.let_tile(f"base + cols{step}", note)
