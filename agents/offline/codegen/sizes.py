"""The numbers of a translation that must mean the same at every traced shape: literal arguments,
numbers the launcher computes from the sizes (N, n, an input's dim, their reciprocals...), and
the launcher's size expressions for the row length and the outputs' shapes."""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

import torch
from torch.fx import Node

from agents.offline.codegen import emit
from agents.offline.codegen import shapes as shp
from agents.offline.codegen.ops import NotSupported, literal
from agents.offline.codegen.trace import op_name


class SizesMixin:
    """Builder methods for numbers and sizes; they read the traces (`graphs`, `per_graph`,
    `index`, `domains`), the parameters and placeholders, and write launcher symbols to `prog`."""

    def arg_at(self, g: int, node: Node, key: int | str, default: Any = None) -> Any:
        other = self.per_graph[g][self.index[node]]
        if isinstance(key, int):
            return other.args[key] if key < len(other.args) else default
        return other.kwargs.get(key, default)

    def lit(self, node: Node, key: int | str, default: Any = None) -> Any:
        values = [self.arg_at(g, node, key, default) for g in range(len(self.graphs))]
        if any(v != values[0] or type(v) is not type(values[0]) for v in values):
            raise NotSupported(
                f"argument {key} of aten.{op_name(node)} changes with the shape or the inputs: "
                f"{values}"
            )
        return values[0]

    def num(self, node: Node, key: int | str, default: Any = None) -> str:
        values = [self.arg_at(g, node, key, default) for g in range(len(self.graphs))]
        if all(v == values[0] and type(v) is type(values[0]) for v in values):
            return literal(values[0])
        for name, expr, of in self._candidates():
            want = [of(d) for d in self.domains]
            if all(
                isinstance(v, int | float) and math.isclose(v, w, rel_tol=1e-6)
                for v, w in zip(values, want, strict=True)
            ):
                if name not in ("N", "n"):
                    self.prog.symbols[name] = expr
                return name
        found = self.scalar_param(values) or self.input_dim(values) or self.dim_difference(values)
        if found:
            return found
        raise NotSupported(
            f"a number in aten.{op_name(node)} changes with the shape or the inputs ({values}) "
            "and is not a size the kernel knows (the row length N or the element count n)"
        )

    def scalar_param(self, values: list[Any]) -> str | None:
        """A kernel argument for a number that is a float parameter's value in every trace (the
        traces include one with the float parameters moved, so a literal that merely equals
        the parameter's value does not match)."""
        for name, params in self.scalars.items():
            if all(
                isinstance(v, int | float) and math.isclose(v, w, rel_tol=1e-9, abs_tol=1e-12)
                for v, w in zip(values, params, strict=True)
            ):
                sym = self.scalar_symbols.get(name)
                if sym is None:
                    sym = emit.safe_name(name, self.taken | self.vars | set(self.prog.symbols))
                    self.scalar_symbols[name] = sym
                    self.taken.add(sym)  # a kernel argument, not a statement's variable
                    self.prog.symbols[sym] = f"float({name})"
                return sym
        return None

    def input_dim(self, values: list[Any]) -> str | None:
        """A kernel argument for a number that is an input's dim (or its reciprocal) at every
        traced shape, e.g. the batch size a loss is divided by."""
        if not all(isinstance(v, int | float) and v > 0 for v in values):
            return None
        for inverse in (False, True):
            ints = [1.0 / v if inverse else v for v in values]
            if not all(math.isclose(i, round(i), rel_tol=1e-9) for i in ints):
                continue
            try:
                expr = self.make_sizes().dim([round(i) for i in ints])
            except NotSupported:
                continue
            name = expr.replace(".shape[-1]", "_last").replace(".shape[", "_dim")
            name = ("inv_" if inverse else "") + re.sub(r"\W+", "_", name).strip("_")
            self.prog.symbols[name] = f"1.0 / ({expr})" if inverse else expr
            return name
        return None

    def dim_difference(self, values: list[Any]) -> str | None:
        """A kernel argument for an integer that is one input dim less another at every traced
        shape (a causal mask's offset between SK keys and the last SQ queries: SK - SQ)."""
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return None
        sizes = self.make_sizes()
        dims = []
        for name in sizes.order:
            ndim = len(sizes.shapes[0][name])
            if all(len(s[name]) == ndim for s in sizes.shapes):
                for j in range(ndim):
                    text = f"{name}.shape[{-1 if j == ndim - 1 else j}]"
                    dims.append((text, [s[name][j] for s in sizes.shapes]))
        for a, at in dims:
            for b, bt in dims:
                if a != b and all(x - y == v for x, y, v in zip(at, bt, values, strict=True)):
                    name = re.sub(r"\W+", "_", f"{a}_minus_{b}".replace(".shape[-1]", "_last"))
                    name = name.replace("_shape_", "_dim").strip("_")
                    self.prog.symbols[name] = f"{a} - {b}"
                    return name
        return None

    def make_sizes(self) -> shp.Sizes:
        """Size expressions over the tensor parameters, full-size inputs first."""
        tensors = [
            p
            for p, n in zip(self.params, self.placeholders, strict=True)
            if isinstance(n.meta.get("val"), torch.Tensor)
        ]
        fulls = [p.name for p in self.prog.inputs if p.kind == "full"]
        order = fulls + [p for p in tensors if p not in fulls]
        shapes = [
            {
                p: tuple(nodes[self.index[n]].meta["val"].shape)
                for p, n in zip(self.params, self.placeholders, strict=True)
                if p in order
            }
            for nodes in self.per_graph
        ]
        return shp.Sizes(shapes, order)

    def _candidates(self) -> list[tuple[str, str, Any]]:
        if self.structure in ("pointwise", "total"):
            return [("n", "n", math.prod), ("inv_n", "1.0 / n", lambda d: 1.0 / math.prod(d))]
        return [
            ("N", "N", lambda d: d[-1]),
            ("inv_N", "1.0 / N", lambda d: 1.0 / d[-1]),
            ("sqrt_N", "N ** 0.5", lambda d: d[-1] ** 0.5),
            ("rsqrt_N", "N ** -0.5", lambda d: d[-1] ** -0.5),
            ("N_minus_1", "N - 1", lambda d: d[-1] - 1),
            ("inv_N_minus_1", "1.0 / (N - 1)", lambda d: 1.0 / max(d[-1] - 1, 1)),
            ("N_over_N_minus_1", "N / max(N - 1, 1)", lambda d: d[-1] / max(d[-1] - 1, 1)),
        ]

    def sizes(self) -> None:
        """The launcher's expressions for N (row structure) and the outputs' shapes."""
        if self.prog.gemm is not None:
            self.prog.primary = self.prog.gemm.a
        elif not self.prog.inputs:
            raise NotSupported("the reference reads no tensor input")
        else:
            self.prog.primary = self.prog.inputs[0].name
        if self.structure == "total" and not any(p.kind == "full" for p in self.prog.inputs):
            raise NotSupported("a whole-tensor reduction of no full-size input")
        sizes = self.make_sizes()
        last = None
        if self.structure in ("row", "gemm"):
            n_values = [d[-1] for d in self.domains]
            if self.structure == "row" and any(self.splits):  # N = numel / K
                full = next((p.name for p in self.prog.inputs if p.kind == "full"), None)
                if full is None:
                    raise NotSupported("rows of leading and trailing dims of no full-size input")
                kept = sizes.dim([math.prod(d[:-1]) for d in self.domains])
                self.prog.width = f"{full}.numel() // ({kept})"
            elif self.structure == "row":
                self.prog.width = sizes.dim(n_values)
            last = ("N", n_values)
        if any(s != 1 for s in self.strides):
            self.prog.symbols["inner"] = sizes.dim(self.strides)
            self.prog.inner = "inner"
        if any(self.splits):  # rows of leading and trailing dims: I, and K * I (K: the rows)
            self.prog.symbols["split"] = sizes.dim(self.splits)
            kept = [math.prod(d[:-1]) * s for d, s in zip(self.domains, self.splits, strict=True)]
            self.prog.symbols["split_stride"] = sizes.dim(kept)
            self.prog.split = "split"
        for lead in sorted(self.groups):  # rows sharing one value of a batch tensor
            dims = [
                sizes.dim([d[j] for d in self.domains])
                for j in range(lead, len(self.domains[0]) - 1)
            ]
            self.prog.symbols[f"group_{lead}"] = " * ".join(dims)
        outs = []
        for out, o in zip(self.out_nodes, self.prog.outputs, strict=True):
            shapes_t = [tuple(nodes[self.index[out]].meta["val"].shape) for nodes in self.per_graph]
            shape = self.window_shape(shapes_t) or sizes.shape(shapes_t, last)
            outs.append(dataclasses.replace(o, shape=shape))
        self.prog.outputs = outs
