"""The gemm structure's part of the builder: the matrix multiply's operands (inputs through
permutes, no-op views and casts), the tiled program's shape, and the product's value (the fp32
accumulator, with addmm's bias) that the elementwise epilogue reads."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch.fx import Node

from agents.offline.codegen import emit
from agents.offline.codegen import shapes as shp
from agents.offline.codegen.ops import NotSupported, literal
from agents.offline.codegen.stages import ancestors
from agents.offline.codegen.trace import CONVERSIONS, RAMPS, VIEWS, op_name
from agents.offline.codegen.values import Value, is_var, rounded


@dataclass(frozen=True)
class Operand:
    """A matrix multiply operand: input `node`, viewed by `views` (launcher text, e.g.
    '.permute(1, 0)'), loaded in `dtype` and cast to `dot_dtype` for tl.dot."""

    node: Node
    views: str
    dtype: torch.dtype
    dot_dtype: torch.dtype


class GemmMixin:
    """Builder methods for the gemm structure; `gemm_node` is the one matrix multiply."""

    def operand(self, i: int) -> Operand:
        """Operand i (0: A, 1: B) of the matrix multiply: an input, possibly through permutes,
        no-op views and casts, which the launcher replays as views (strides) and the kernel as
        a cast at load. Anything else in front of the multiply is refused."""
        mm = self.gemm_node
        name = shp.packet(mm)
        node = mm.args[i + 1 if name == "addmm" else i]
        dot_dtype = self.dtype_of(node)
        chain: list[Node] = []
        while not (isinstance(node, Node) and node.op == "placeholder"):
            if not isinstance(node, Node) or node.op != "call_function":
                raise NotSupported(f"operand {i} of aten.{op_name(mm)} is not a tensor input")
            op = shp.packet(node)
            if op == "permute" or op in CONVERSIONS:
                pass
            elif op in VIEWS and op != "slice":  # an expand that expands nothing included
                if not self.same_shape(node, node.args[0]) and not self._rows_merged(i, node):
                    raise NotSupported(
                        f"operand {i} of aten.{op_name(mm)} is reshaped (aten.{op_name(node)}); "
                        "only transposes and casts of an input may feed the matrix multiply"
                    )
            else:
                ramp = any(shp.packet(a) in RAMPS for a in ancestors(node))
                why = " (from an index ramp, aten.arange: a mask or a diagonal)" if ramp else ""
                raise NotSupported(
                    f"operand {i} of aten.{op_name(mm)} is computed by aten.{op_name(node)}{why}: "
                    "a prologue other than casts and transposes of an input is not supported"
                )
            chain.append(node)
            node = node.args[0]
        placeholder = node
        src_dtype = self.dtype_of(placeholder)
        for c in chain:
            if shp.packet(c) in CONVERSIONS and self.dtype_of(c) not in (src_dtype, dot_dtype):
                raise NotSupported(
                    f"operand {i} of aten.{op_name(mm)} passes through {self.dtype_of(c)} "
                    "on its way from the input's dtype to the multiply's"
                )
        self.prologue |= set(chain) | {placeholder}
        views = []
        merged = False
        for c in reversed(chain):
            if shp.packet(c) == "permute":
                dims = [int(d) for d in self.lit(c, 1)]
                views.append(f".permute({', '.join(map(str, dims))})")
            elif shp.packet(c) in VIEWS and not self.same_shape(c, c.args[0]):
                views.append(".reshape(-1, _opa_k)")  # the launcher names K before it
                merged = True
        ndim = 3 if shp.packet(mm) == "bmm" else 2
        if not merged and node.meta["val"].dim() != ndim:
            raise NotSupported(f"operand {i} of aten.{op_name(mm)} is not {ndim}-D")
        if dot_dtype not in (torch.float32, torch.float16, torch.bfloat16) or (
            not src_dtype.is_floating_point
        ):
            raise NotSupported(
                f"aten.{op_name(mm)} of {src_dtype} inputs in {dot_dtype}: the gemm structure "
                "multiplies fp32, fp16 and bf16 inputs"
            )
        return Operand(placeholder, "".join(views), src_dtype, dot_dtype)

    def _rows_merged(self, i: int, view: Node) -> bool:
        """`view` merges the leading dims of operand A (i == 0) of a 2-D multiply, an input
        read directly, into its rows: [..., K] -> [prod(...), K] at every traced shape (a
        3-D activation times a weight matrix, as torch.matmul and nn.Linear trace it). The launcher replays
        it as a reshape; the product's rows are then the output's leading dims in order."""
        src = view.args[0]
        if i != 0 or shp.packet(self.gemm_node) not in ("mm", "addmm") or src.op != "placeholder":
            return False
        for nodes in self.per_graph:
            before = nodes[self.index[src]].meta["val"].shape
            after = nodes[self.index[view]].meta["val"].shape
            if len(before) < 2 or len(after) != 2 or after[-1] != before[-1]:
                return False
        return True

    def gemm_program(self) -> None:
        mm = self.gemm_node
        if self.kind(mm).name != "full" or any(
            d[-1] != nodes[self.index[mm]].meta["val"].shape[-1]
            for d, nodes in zip(self.domains, self.per_graph, strict=True)
        ):
            raise NotSupported(
                f"the result of aten.{op_name(mm)} is not the shape of the output (the epilogue "
                "broadcasts, reshapes or transposes it)"
            )
        square = all(math.prod(d[:-1]) == d[-1] for d in self.domains)
        vector = next(
            (
                n
                for n, k in zip(self.nodes, self.kinds, strict=True)
                if k and k.name not in ("full", "scalar")
            ),
            None,
        )
        if square and vector is not None:
            raise NotSupported(
                f"the product is square at every traced shape, so {shp.describe(vector)} could be "
                "per-row or per-column: its shape does not say which"
            )
        names = dict(zip(self.placeholders, self.params, strict=True))
        a, b = self.operands
        self.prog.gemm = emit.Gemm(
            a=names[a.node],
            b=names[b.node],
            a_views=a.views,
            b_views=b.views,
            dot_dtype=a.dot_dtype,
            batched=shp.packet(mm) == "bmm",
        )
        self.vars.add("_acc")
        self.tile_vars.add("_acc")

    def gemm_value(self, node: Node) -> None:
        """The multiply's result: the fp32 accumulator, rounded where the reference rounds it;
        addmm adds beta * bias."""
        dtype = self.dtype_of(node)
        expr = "_acc"
        if shp.packet(node) == "addmm":
            alpha, beta = self.lit(node, "alpha", 1), self.lit(node, "beta", 1)
            bias = self.value(node.args[0])
            if bias.dtype != dtype or not dtype.is_floating_point:
                raise NotSupported(f"aten.{op_name(node)} with a {bias.dtype} bias")
            acc = expr if alpha == 1 else f"{literal(alpha)} * {expr}"
            if dtype.itemsize < 4:  # the product is rounded before the bias is added
                acc = f"({acc}).to({emit.TL_DTYPES[dtype]}).to(tl.float32)"
            bexpr = bias.expr if beta == 1 else f"{literal(beta)} * {bias.expr}"
            expr = self.add(f"{bexpr} + {acc}", True, op_name(node))
        expr = rounded(expr, dtype)
        if not is_var(expr):
            expr = self.add(expr, True, op_name(node))
        self.values[node] = Value(expr, dtype)
