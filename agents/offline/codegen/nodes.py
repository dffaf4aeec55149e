"""The builder's handlers for graph nodes other than inputs, outputs and the matrix multiply:
views, slices of wide inputs, dtype conversions, constants, tuple items, and compute (elementwise
ops and reductions, translated by `agents.offline.codegen.ops` through a `_Call`)."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

import torch
from torch.fx import Node

from agents.offline.codegen import emit
from agents.offline.codegen import shapes as shp
from agents.offline.codegen.ops import (
    ARG_REDUCTIONS,
    ELEMENTWISE,
    REDUCTIONS,
    NotSupported,
    literal,
    var_and_mean,
)
from agents.offline.codegen.trace import CONVERSIONS, VIEWS, op_name
from agents.offline.codegen.values import Value, constant_value, is_var, rounded

if TYPE_CHECKING:
    from agents.offline.codegen.builder import Builder


class NodesMixin:
    """Builder methods that translate one node each into statements and values."""

    def view(self, node: Node) -> None:
        src = node.args[0]
        k_in, k_out = self.kind(src), self.kind(node)
        name = shp.packet(node)
        if name in ("slice", "permute") and not self.same_shape(node, src):
            raise NotSupported(f"aten.{op_name(node)} reorders or drops elements (data movement)")
        if name == "permute" and list(self.lit(node, 1)) != sorted(self.lit(node, 1)):
            raise NotSupported(f"aten.{op_name(node)} reorders elements (a transpose)")
        expands = name in ("expand", "expand_copy") and shp.join([k_in, k_out]) == k_out
        if not (k_in == k_out or k_in.name == "scalar" or expands):
            raise NotSupported(
                f"aten.{op_name(node)} turns a {k_in.name} tensor into a {k_out.name} one: "
                "data movement"
            )
        if src in self.wide:
            self.wide[node] = self.wide[src]
        else:
            self.values[node] = self.value(src)

    def slice_wide(self, node: Node) -> None:
        """A slice of a wide input's last dim: a strided load of N columns."""
        param = self.wide[node.args[0]]
        for g, nodes in enumerate(self.per_graph):
            ndim = nodes[self.index[node]].meta["val"].dim()
            if self.arg_at(g, node, 1, 0) % ndim != ndim - 1:
                raise NotSupported(
                    f"aten.{op_name(node)} slices input {param.name} along a dim other than the last"
                )
        if self.kind(node).name != "full":
            raise NotSupported(f"a slice of input {param.name} that is not N columns wide")
        starts = [self.arg_at(g, node, 2, 0) for g in range(len(self.graphs))]
        start = "0" if all(v in (None, 0) for v in starts) else self.num(node, 2)
        step = self.lit(node, 4, 1)
        cols = "cols" if step == 1 else f"cols * {literal(step)}"
        offset = f"row * {param.name}_row_stride" + ("" if start == "0" else f" + {start}")
        other = "0.0" if param.dtype.is_floating_point else "0"
        expr = f"tl.load({param.name}_ptr + {offset} + {cols}, mask=mask, other={other})"
        if param.dtype.is_floating_point:
            expr += ".to(tl.float32)"
        self.values[node] = Value(self.add(expr, True, op_name(node)), param.dtype)

    def convert(self, node: Node) -> None:
        src = node.args[0]
        want = self.lit(node, "dtype", None)
        if want is None and len(node.args) > 1 and isinstance(node.args[1], torch.dtype):
            want = node.args[1]
        if src in self.wide:
            if (
                want is None
                or want == self.wide[src].dtype
                or want in (torch.float32, torch.float64)
            ):
                self.wide[node] = self.wide[src]  # loads convert to fp32 anyway
                return
            raise NotSupported(f"aten.{op_name(node)} rounds a whole wide input")
        if want is None:
            self.values[node] = self.value(src)
            return
        self.values[node] = self.converted(self.value(src), want, op_name(node))

    def converted(self, value: Value, want: torch.dtype, note: str) -> Value:
        """`value` in dtype `want` (floats stay fp32 in the kernel, rounded where `want` is
        narrower)."""
        expr, have = value.expr, value.dtype
        if want == have:
            return value
        if want not in emit.TL_DTYPES:
            raise NotSupported(f"aten.{note} converts to {want}, which the generator does not emit")
        if want.is_floating_point:
            if not have.is_floating_point:
                expr = f"{expr}.to(tl.float32)"
            elif want in (torch.float32, torch.float64):  # already held in fp32
                return Value(expr, want)
        elif want == torch.bool:
            expr = f"{expr} != 0"
        else:
            expr = f"{expr}.to({emit.TL_DTYPES[want]})"
        return Value(self.add(rounded(expr, want), None, note), want)

    def copy(self, node: Node) -> None:
        """aten.copy(dst, src), a functionalized `dst.copy_(src)`: src broadcast to dst's shape,
        in dst's dtype (dst's own values are not read)."""
        src = node.args[1]
        if not isinstance(src, Node):
            raise NotSupported(f"aten.{op_name(node)} copies {src!r}, not a tensor")
        k_in, k_out = self.kind(src), self.kind(node)
        if not (k_in == k_out or k_in.name == "scalar" or shp.join([k_in, k_out]) == k_out):
            raise NotSupported(
                f"aten.{op_name(node)} copies a {k_in.name} tensor into a {k_out.name} one: "
                "data movement"
            )
        self.values[node] = self.converted(self.value(src), self.dtype_of(node), op_name(node))

    def constant(self, node: Node) -> None:
        name = shp.packet(node)
        dtype = self.dtype_of(node)
        if name in ("full", "full_like"):
            text = self.num(node, 1)
        elif name == "scalar_tensor":
            text = self.num(node, 0)
        else:
            text = "1" if name.startswith("ones") else "0"
        if dtype == torch.bool:
            text = "False" if text in ("0", "0.0", "False") else "True"
        elif dtype.is_floating_point and re.fullmatch(r"\d+", text):
            text += ".0"
        self.values[node] = Value(text, dtype)

    def getitem(self, node: Node) -> None:
        src, index = node.args
        parts = self.values.get(src)
        if not isinstance(parts, list):
            raise NotSupported(f"getitem on {shp.describe(src)}, which is not a tuple it knows")
        if parts[index] is None:  # a max pool's indices
            if node.users:
                raise NotSupported(
                    f"the reference uses the indices of aten.{op_name(src)} (an arg-reduction)"
                )
            return
        self.values[node] = parts[index]

    def max_dim(self, node: Node) -> None:
        """max/min over a dim: (values, indices), each computed where the reference reads it.
        The indices are an arg-reduction of the row; read with them, the values are the value
        it picks (one reduction, a NaN winning as in torch); read alone, a max/min reduction."""
        how = shp.packet(node)
        self.check_reduction(node, how)
        call = _Call(self, node)
        call.reduce_dims(1)
        read = {u.args[1] for u in node.users if shp.packet(u) == "getitem"}
        dtype = self.dtype_of(node)
        values = indices = None
        if 1 in read:
            indices = self.arg_index(node, f"arg{how}", call.x(0))
            if 0 in read:  # the pair's value (`emit.Stmt.reduce`), a variable of the kernel
                best = f"_{indices.expr}_best"
                self.vars.add(best)
                self.reduced.add(best)
                values = Value(self.add(best, False, op_name(node)), dtype)
        elif 0 in read:
            expr = rounded(call.reduce(how, call.x(0)), dtype)
            if not is_var(expr):
                expr = self.add(expr, False, op_name(node))
            values = Value(expr, dtype)
        self.values[node] = [values, indices]

    def arg_reduce(self, node: Node) -> None:
        """argmax/argmin over one dim (the row) or the whole tensor (dim None), keepdim or not."""
        how = ARG_REDUCTIONS[shp.packet(node)]
        self.check_reduction(node, how)
        call = _Call(self, node)
        call.reduce_dims(1)
        self.values[node] = self.arg_index(node, how, call.x(0))

    def arg_index(self, node: Node, how: str, expr: str) -> Value:
        """The int64 index along the row (or, in the total structure, the flat index in the
        whole tensor) of the first max ("argmax") or min ("argmin") of the tile `expr` (the
        values of `node`'s input), as torch picks it: the first of equal values, the first NaN
        where there is one. Floats compare in fp32 (the kernel holds
        them so; a float64 input would tie values torch tells apart), integers in int64."""
        if self.structure not in ("row", "total"):
            raise NotSupported(
                f"aten.{op_name(node)} is an arg-reduction in a {self.structure} kernel; "
                "arg-reductions run over the rows of the row structure or a whole tensor"
            )
        dtype = self.dtype_of(node.args[0])
        if dtype == torch.float64:
            raise NotSupported(
                f"aten.{op_name(node)} of a float64 tensor; the kernel compares in fp32, where "
                "values torch tells apart may tie"
            )
        compare = "tl.float32"
        if not dtype.is_floating_point:
            expr, compare = f"({expr}).to(tl.int64)", "tl.int64"
        self.prog.helpers.add(f"_{how}_combine")
        target = self.add(expr, False, op_name(node), reduce=how, reduce_dtype=compare)
        return Value(target, torch.int64)

    def in_place(self, node: Node, name: str) -> None:
        """An in-place elementwise op (add_ in a decomposition, relu_) on a value computed here
        that nothing reads afterwards: the same op out of place."""
        target = node.args[0]
        at = self.index[node]
        if (
            not isinstance(target, Node)
            or target.op != "call_function"
            or (shp.packet(target) in VIEWS)
        ):
            raise NotSupported(
                f"aten.{op_name(node)} writes into {shp.describe(target) if isinstance(target, Node) else target}"
                " (an input or a view): the kernel does not mutate its inputs"
            )
        if any(self.index[u] > at for u in target.users if u is not node):
            raise NotSupported(f"aten.{op_name(node)} overwrites a value that is read afterwards")
        self.compute(node, name)

    def var_mean(self, node: Node) -> None:
        self.check_reduction(node, "var_mean")
        var, mean = var_and_mean(_Call(self, node))
        dtypes = [v.dtype for v in shp.tensor_vals(node)]
        v = self.add(rounded(var, dtypes[0]), False, op_name(node))
        m = self.add(rounded(mean, dtypes[1]), False, op_name(node))
        self.values[node] = [Value(v, dtypes[0]), Value(m, dtypes[1])]

    def scan(self, node: Node, how: str) -> None:
        """cumsum/cumprod along the row: an inclusive scan of a full-size tile in fp32 (the
        carry between tiles of a long row included), rounded once to the result's dtype."""
        src = node.args[0]
        dtype = self.dtype_of(node)
        if not dtype.is_floating_point:
            raise NotSupported(
                f"aten.{op_name(node)} returns {dtype}; only floating scans are translated (an "
                "integer scan in fp32 would lose exact counts)"
            )
        if self.kind(src).name != "full" or self.kind(node).name != "full":
            raise NotSupported(
                f"aten.{op_name(node)} scans a {self.kind(src).name} tensor; only full-size "
                "tensors are scanned"
            )
        for g, nodes in enumerate(self.per_graph):
            here = nodes[self.index[node]]
            ndim = here.meta["val"].dim()
            dim = self.arg_at(g, node, 1, 0)
            if self.strides[g] != 1 or (ndim and dim % ndim != ndim - 1):
                raise NotSupported(
                    f"aten.{op_name(node)} scans dim {dim} of a {ndim}-d tensor; only scans "
                    "along the last dim (the row) are supported"
                )
        operand = _Call(self, node).x(0)
        expr = self.add(operand, True, op_name(node), scan=how)
        rounded_expr = rounded(expr, dtype)
        if not is_var(rounded_expr):
            rounded_expr = self.add(rounded_expr, True, op_name(node))
        self.values[node] = Value(rounded_expr, dtype)

    def gather(self, node: Node) -> None:
        """torch.gather along the last dim from an input (directly or through casts to fp32):
        out[r, k] = src[r, idx[r, k]], a load at the row's start plus the index. The source is
        a full-size input (row r starts at base) or a wide one (row r starts at r * its row
        stride); the index is full-size (one load per output element) or one per row (a
        gather of [R, 1]). Indices are trusted to lie in [0, src's last dim), as torch checks
        them and a kernel does not."""
        src, idx = node.args[0], node.args[2]
        if not isinstance(idx, Node) or self.lit(node, "sparse_grad", False):
            raise NotSupported(f"aten.{op_name(node)} with a sparse gradient or no index tensor")
        for g, nodes in enumerate(self.per_graph):
            here = nodes[self.index[node]]
            ndim = here.meta["val"].dim()
            dim = self.arg_at(g, node, 1, 0)
            if self.strides[g] != 1 or ndim == 0 or dim % ndim != ndim - 1:
                raise NotSupported(
                    f"aten.{op_name(node)} gathers along dim {dim} of a {ndim}-d tensor; only "
                    "gathers along the last dim (within a row) are supported"
                )
        param, start = self.gather_source(node, src)
        k_idx, k_out = self.kind(idx), self.kind(node)
        index = self.value(idx)
        if index.dtype not in (torch.int32, torch.int64):
            raise NotSupported(f"aten.{op_name(node)} indexes with {index.dtype}")
        if k_idx != k_out or k_out.name not in ("full", "row"):
            raise NotSupported(
                f"aten.{op_name(node)} gathers into a {k_out.name} tensor with a {k_idx.name} "
                "index; the index must be full-size or one per row, the result the same"
            )
        other = "0.0" if param.dtype.is_floating_point else "0"
        if k_out.name == "full":
            expr = f"tl.load({param.name}_ptr + {start} + {index.expr}, mask=mask, other={other})"
        else:
            expr = f"tl.load({param.name}_ptr + {start} + {index.expr}, mask=_rmask, other={other})"
        if param.dtype.is_floating_point:
            expr += ".to(tl.float32)"
        self.values[node] = Value(self.add(expr, k_out.tile, op_name(node)), self.dtype_of(node))

    def lookup(self, node: Node) -> None:
        """Whole rows of a 2-d table chosen by an index, one per output row: table[ids],
        F.embedding(ids, table), index_select(table, 0, ids). out[r, :] = table[ids[r], :], a
        load at row ids[r] (in int64: a large vocabulary's offsets pass 2^31) of the table's
        row stride. Indices are trusted to lie in [0, rows of the table), as torch checks them
        and a kernel does not."""
        name = shp.packet(node)
        table = node.args[0]
        if name == "index":
            picks = node.args[1]
            if len(picks) != 1 or not isinstance(picks[0], Node):
                raise NotSupported(
                    f"aten.{op_name(node)} indexes {len(picks)} dims (or with None); only a "
                    "lookup of rows by one index tensor is supported"
                )
            ids = picks[0]
        elif name == "embedding":
            ids = node.args[1]
        else:
            if self.lit(node, 1) != 0:
                raise NotSupported(f"aten.{op_name(node)} selects along dim {self.lit(node, 1)}")
            ids = node.args[2]
        param = self.input_params.get(table) if table in self.tables else None
        if param is None:
            raise NotSupported(f"aten.{op_name(node)} looks up rows of {shp.describe(table)}")
        index = self.value(ids)
        if index.dtype not in (torch.int32, torch.int64) or self.kind(ids).name != "row":
            raise NotSupported(
                f"aten.{op_name(node)} looks up rows with a {self.kind(ids).name} {index.dtype} "
                "index; one integer per output row is supported"
            )
        if self.kind(node).name != "full":
            raise NotSupported(
                f"aten.{op_name(node)} looks up into a {self.kind(node).name} tensor"
            )
        other = "0.0" if param.dtype.is_floating_point else "0"
        start = f"{index.expr}.to(tl.int64) * {param.name}_row_stride"
        expr = f"tl.load({param.name}_ptr + {start} + cols, mask=mask, other={other})"
        if param.dtype.is_floating_point:
            expr += ".to(tl.float32)"
        self.values[node] = Value(self.add(expr, True, op_name(node)), self.dtype_of(node))

    def gather_source(self, node: Node, src: Node) -> tuple[emit.Param, str]:
        """The input a gather reads and the kernel text for its row's first element. Casts
        between the input and the gather are allowed where they only widen to fp32 (loads
        convert to fp32 anyway) or keep the dtype."""
        at = src
        while at.op == "call_function" and (
            shp.packet(at) in CONVERSIONS or shp.packet(at) in ("alias", "clone", "detach")
        ):
            have = self.dtype_of(at.args[0])
            want = self.dtype_of(at)
            widening = have.is_floating_point and want in (torch.float32, torch.float64)
            if want != have and not widening:
                raise NotSupported(
                    f"aten.{op_name(node)} gathers from a cast of {have} to {want}; only casts "
                    "that widen a float input to fp32 are gathered through"
                )
            at = at.args[0]
        if at.op != "placeholder":
            raise NotSupported(
                f"aten.{op_name(node)} gathers from {shp.describe(at)}; only inputs (and "
                "casts of them) are gathered from"
            )
        if at in self.wide:
            param = self.wide[at]
            return param, f"row * {param.name}_row_stride"
        param = self.input_params.get(at)
        if param is None or param.kind != "full":
            raise NotSupported(
                f"aten.{op_name(node)} gathers from {shp.describe(at)}, which is neither "
                "full-size nor a wide input"
            )
        return param, "base"

    def check_reduction(self, node: Node, name: str) -> None:
        src, out = self.kind(node.args[0]).name, self.kind(node).name
        want = "scalar" if self.structure == "total" else "row"
        if src != "full" or out != ("full" if name in ("_softmax", "_log_softmax") else want):
            raise NotSupported(
                f"aten.{op_name(node)} reduces a {src} tensor to a {out} one; only reductions of "
                "the full tensor over one run of adjacent dims (the row) are supported"
            )

    def compute(self, node: Node, name: str) -> None:
        if name in REDUCTIONS:
            self.check_reduction(node, name)
            expr = REDUCTIONS[name](_Call(self, node))
        else:
            self.check_broadcast(node)
            expr = ELEMENTWISE[name](_Call(self, node))
        dtype = self.dtype_of(node)
        expr = rounded(expr, dtype)
        if not is_var(expr):  # a bare variable needs no statement
            expr = self.add(expr, self.kind(node).tile, op_name(node))
        self.values[node] = Value(expr, dtype)

    def check_broadcast(self, node: Node) -> None:
        """An elementwise op's operands broadcast to its result as their kinds say."""
        operands = [a for a in node.args if isinstance(a, Node)]
        if not operands:
            return
        k_in, k_out = shp.join([self.kind(a) for a in operands]), self.kind(node)
        if k_in != k_out:
            raise NotSupported(
                f"aten.{op_name(node)} broadcasts {k_in.name} operands to a {k_out.name} result"
            )
        ndim = node.meta["val"].dim()
        for a in operands:  # torch aligns dims from the right: [B, N] against [B, S, N] is not
            if self.kind(a).name.startswith("batch") and a.meta["val"].dim() != ndim:
                raise NotSupported(
                    f"aten.{op_name(node)} broadcasts {shp.describe(a)} from the right"
                )


class _Call:
    """One aten call as `ops` sees it (see ops.Call)."""

    def __init__(self, builder: Builder, node: Node) -> None:
        self.b = builder
        self.node = node
        self.op = op_name(node)
        self.out_dtype = shp.tensor_vals(node)[0].dtype
        self.count = "n" if builder.structure == "total" else "N"
        # integer and boolean operands are read as fp32 when the result is floating
        self.to_float = self.out_dtype.is_floating_point

    def _arg(self, i: int) -> Any:
        return self.node.args[i] if i < len(self.node.args) else None

    def is_tensor(self, i: int) -> bool:
        return isinstance(self._arg(i), Node)

    def dtype(self, i: int) -> torch.dtype | None:
        arg = self._arg(i)
        return self.b.value(arg).dtype if isinstance(arg, Node) else None

    def x(self, i: int) -> str:
        arg = self._arg(i)
        if not isinstance(arg, Node):
            return self.b.num(self.node, i)
        value = self.b.value(arg)
        if self.to_float and not value.dtype.is_floating_point:
            if shp.packet(self.node) == "where" and i == 0:
                return value.expr
            if not is_var(value.expr):  # a constant
                return literal(constant_value(value.expr))
            return f"{value.expr}.to(tl.float32)"
        return value.expr

    def lit(self, key: int | str, default: Any = None) -> Any:
        return self.b.lit(self.node, key, default)

    def num(self, key: int | str, default: Any = None) -> str:
        return self.b.num(self.node, key, default)

    def helper(self, name: str) -> None:
        self.b.prog.helpers.add(name)

    def let(self, expr: str) -> str:
        return self.b.add(expr, None, self.op)

    def reduce(self, how: str, expr: str) -> str:
        return self.b.add(expr, False, self.op, reduce=how)

    def reduce_dims(self, key: int | str) -> None:
        """The reduction runs over the row: the last dim, or trailing dims that fold into it."""
        for g, nodes in enumerate(self.b.per_graph):
            here = nodes[self.b.index[self.node]]
            span, ends = shp.reduced_range(here), shp.reduced_ends(here)
            shape = tuple(here.args[0].meta["val"].shape)
            want = (self.b.domains[g][-1], self.b.strides[g], self.b.splits[g])
            if span is not None:  # rows of adjacent dims, strided by the numel after them
                have = (math.prod(shape[span[0] : span[1]]), math.prod(shape[span[1] :]), 0)
            elif ends is not None:  # rows of the leading and trailing dims (batch norm)
                inner = math.prod(shape[ends[1] :])
                have = (math.prod(shape[: ends[0]]) * inner, 1, inner)
            if (span is None and ends is None) or have != want:
                raise NotSupported(
                    f"aten.{self.op} reduces over dims {here.args[1]} of a tensor of shape "
                    f"{shape}; only one run of adjacent dims (the row), or the leading and "
                    "trailing dims around kept ones, the same for every reduction, is supported"
                )
