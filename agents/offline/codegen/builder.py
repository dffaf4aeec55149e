"""The builder: walks the first trace's graph node by node (the other traces vouch for its
numbers) and builds the `emit.Program` of statements that `emit` writes out as a kernel.

`Builder` holds the state and drives the walk (inputs, dispatch, outputs); its mixins hold the
rest: `sizes.SizesMixin` (numbers that must hold at every shape, sizes),
`gemm.GemmMixin` (the matrix multiply), `window.WindowMixin` (index-map ops: pads and pools),
`ramps.RampsMixin` (index ramps: aranges computed from each element's index),
`broadcasts.BroadcastMixin` (inputs loaded at indices computed from each element's offset) and
`nodes.NodesMixin` (per-node translations).
"""

from __future__ import annotations

import re

import torch
from torch.fx import GraphModule, Node

from agents.offline.codegen import emit
from agents.offline.codegen import shapes as shp
from agents.offline.codegen.broadcasts import BroadcastMixin
from agents.offline.codegen.gemm import GemmMixin, Operand
from agents.offline.codegen.nodes import NodesMixin
from agents.offline.codegen.ops import ARG_REDUCTIONS, ELEMENTWISE, NotSupported
from agents.offline.codegen.ramps import RampsMixin
from agents.offline.codegen.sizes import SizesMixin
from agents.offline.codegen.trace import (
    ALONG_ROW,
    CONSTANTS,
    CONVERSIONS,
    COPIES,
    GEMMS,
    LOOKUPS,
    SCANS,
    SELECT_WHY,
    SELECTS,
    VIEWS,
    op_name,
)
from agents.offline.codegen.values import Value, is_var
from agents.offline.codegen.window import WINDOW_OPS, WindowMixin


class Builder(SizesMixin, GemmMixin, WindowMixin, RampsMixin, BroadcastMixin, NodesMixin):
    """Walks the graph of the first trace (the others, node for node, vouch for its numbers) and
    builds the program of statements `emit` writes out."""

    def __init__(
        self,
        graphs: list[GraphModule],
        ops: list[str],
        names: list[str],
        params: list[str],
        launcher: str,
        scalars: dict[str, list[float]] | None = None,
        stores: emit.Stores | None = None,
    ) -> None:
        """`names`: the graphs' inputs (placeholders), in order; `params`: the launcher's
        parameters (those names among them); `launcher`: its name; `scalars`: float parameters
        the kernel may take at run time, with their value in each graph; `stores`: the caller's
        buffers the graphs' last outputs go into, when the call writes into its arguments."""
        self.graphs = graphs
        self.stores = stores
        self.per_graph = [list(g.graph.nodes) for g in graphs]
        self.nodes = self.per_graph[0]
        self.index = {n: i for i, n in enumerate(self.nodes)}
        self.domains = [shp.domain(g) for g in graphs]
        self.strides = [shp.row_stride(g) for g in graphs]
        self.splits = [shp.row_split(g) for g in graphs]  # rows of leading and trailing dims
        self.scalars = scalars or {}
        self.gemm_node = next(
            (n for n in self.nodes if n.op == "call_function" and shp.packet(n) in GEMMS), None
        )
        self.prologue: set[Node] = set()
        self.operands: list[Operand] = []
        if self.gemm_node is not None:
            self.operands = [self.operand(i) for i in range(2)]
            for n in self.prologue:
                if any(u not in self.prologue and u is not self.gemm_node for u in n.users):
                    raise NotSupported(
                        f"{shp.describe(n)} feeds the matrix multiply and the epilogue; the gemm "
                        "structure reads an input either as an operand or in the epilogue"
                    )
        self.windowed = self.find_window_sources()  # inputs read only through index maps
        self.ramps = self.find_ramps()  # index ramps: computed where an elementwise op reads them
        self.check_ramps()
        self.ramp_cache: dict[tuple[Node, tuple[int | None, ...], object], Value] = {}
        self.ramp_exprs: dict[str, str] = {}  # ramp statements, shared by expression
        skip = {self.index[n] for n in self.prologue | self.windowed | self.ramps}
        skip |= {i for i, n in enumerate(self.nodes) if n.op == "placeholder" and not n.users}
        # tables: inputs read only through row lookups (an embedding), rows chosen by an index
        self.tables = {
            n
            for n in self.nodes
            if n.op == "placeholder"
            and n.users
            and all(shp.packet(u) in LOOKUPS and u.args[0] is n for u in n.users)
        }
        skip |= {self.index[n] for n in self.tables}
        rows = [
            shp.row_shape(g) if s == 1 and not split else ()
            for g, s, split in zip(graphs, self.strides, self.splits, strict=True)
        ]
        # broadcast inputs: fit no kind, loaded at indices computed from the element's offset
        self.broadcasts: dict[Node, Node] = {}
        self.broadcast_ends: set[Node] = set()
        skip |= {self.index[n] for n in self.find_broadcasts(skip, rows)}
        self.kinds = shp.node_kinds(graphs, self.domains, skip, rows)
        self.broadcast_kinds()
        self.structure = self._structure()
        if any(s != 1 for s in self.strides) or any(self.splits):
            self._check_strided()
        self.params = names
        clash = emit.launcher_clash(params)
        if self.structure == "gemm":
            clash = clash or next((p for p in params if p in emit.GEMM_WORDS), None)
        if clash:
            raise NotSupported(f"parameter {clash!r} has a name the generated launcher uses itself")
        self.placeholders = [n for n in self.nodes if n.op == "placeholder"]
        if len(self.placeholders) != len(self.params):
            raise NotSupported(
                f"the reference takes {len(self.params)} tensors but traces into "
                f"{len(self.placeholders)} inputs (a list or tuple of tensors)"
            )
        self.prog = emit.Program(
            entry_point=launcher,
            structure=self.structure,
            params=list(params),
            primary="",
            inputs=[],
            stmts=[],
            outputs=[],
            ops=ops,
        )
        self.values: dict[Node, Value | list[Value]] = {}
        self.window_params: dict[Node, emit.Param] = {}  # window sources' parameters
        self.window_shapes: list[tuple[list[tuple[int, ...]], str]] = []  # index-map results
        self.window_exprs: dict[str, str] = {}  # index-map statements, shared by expression
        self.wide: dict[Node, emit.Param] = {}  # wide inputs (and views of them), read by slices
        self.input_params: dict[Node, emit.Param] = {}  # every input the kernel reads
        self.out_nodes: list[Node] = []
        self.groups: set[int] = set()  # leads of the batch kinds read
        self.vars: set[str] = set()
        self.tile_vars: set[str] = set()
        self.reduced: set[str] = set()  # variables that depend on a reduction
        self.scanned: set[str] = set()  # variables that depend on a scan
        self.counter = 0
        self.scalar_symbols: dict[str, str] = {}  # float parameter -> its kernel argument
        self.taken = {f"{p}_ptr" for p in self.params}
        if self.structure == "gemm":
            self.taken |= emit.GEMM_WORDS
            self.gemm_program()

    def _structure(self) -> str:
        reduces = any(shp.is_reduction(n) for n in self.nodes)
        if self.gemm_node is not None:
            scan = next(
                (n for n in self.nodes if shp.packet(n) in ALONG_ROW),
                None,
            )
            if scan is not None:
                raise NotSupported(
                    f"aten.{op_name(scan)} in a matrix multiply's epilogue; the gemm structure "
                    "takes elementwise epilogues only"
                )
            if reduces:
                red = next(n for n in self.nodes if shp.is_reduction(n))
                raise NotSupported(
                    f"aten.{op_name(red)} reduces in a matrix multiply's epilogue; the gemm "
                    "structure takes elementwise epilogues only"
                )
            return "gemm"
        # scans and gathers work along a row: they need the row structure's rows
        along_row = [n for n in self.nodes if shp.packet(n) in ALONG_ROW]
        if reduces and len(self.domains[0]) < 2:
            if along_row:
                raise NotSupported(
                    f"aten.{op_name(along_row[0])} in a reduction of the whole tensor; scans "
                    "and gathers run in the row structure only"
                )
            return "total"
        if reduces or along_row or any(k.name not in ("full", "scalar") for k in self.kinds if k):
            return "row"
        return "pointwise"

    def _check_strided(self) -> None:
        """A reduction over dims before the last reads its rows strided: every tensor must be
        full-size, one value per row, or a scalar (a per-column vector's place in the
        original layout is not what its shape says)."""
        for node, kind in zip(self.nodes, self.kinds, strict=True):
            if kind is not None and kind.name not in ("full", "row", "scalar"):
                raise NotSupported(
                    f"{shp.describe(node)} is a {kind.name} tensor in a reduction over a dim "
                    "before the last; there only full-size, per-row and scalar tensors are "
                    "supported"
                )

    def kind(self, node: Node) -> shp.Kind:
        kind = self.kinds[self.index[node]]
        if kind is None:
            raise NotSupported(f"{shp.describe(node)} is used as a tensor but is not one")
        return kind

    def value(self, node: Node) -> Value:
        if node in self.wide:
            raise NotSupported(
                f"{shp.describe(node)} is used whole although its rows are not N long; only "
                "slices of its last dim are supported"
            )
        val = self.values[node]
        if isinstance(val, list):
            raise NotSupported(f"{shp.describe(node)} is a tuple used as a tensor")
        return val

    def dtype_of(self, node: Node) -> torch.dtype:
        return shp.tensor_vals(node)[0].dtype

    def same_shape(self, a: Node, b: Node) -> bool:
        return all(
            tuple(nodes[self.index[a]].meta["val"].shape)
            == tuple(nodes[self.index[b]].meta["val"].shape)
            for nodes in self.per_graph
        )

    # -- variables and statements
    def fresh(self) -> str:
        while f"v{self.counter}" in self.vars:
            self.counter += 1
        self.vars.add(f"v{self.counter}")
        return f"v{self.counter}"

    def deps(self, expr: str) -> tuple[str, ...]:
        words = dict.fromkeys(re.findall(r"[A-Za-z_]\w*", expr))
        return tuple(w for w in words if w in self.vars)

    def add(
        self,
        expr: str,
        tile: bool | None,
        note: str,
        reduce: str | None = None,
        scan: str | None = None,
        reduce_dtype: str = "tl.float32",
    ) -> str:
        """A statement `v = expr`; a tile when `tile` says so or (None) when it reads a tile.
        With `reduce`, v = that reduction of expr over the row (an arg-reduction compares in
        `reduce_dtype`); with `scan`, v = the inclusive scan ("sum" | "prod") of expr along the
        row (a tile)."""
        deps = self.deps(expr)
        if tile is None:
            tile = reduce is None and any(d in self.tile_vars for d in deps)
        if reduce is not None and any(d in self.scanned for d in deps):
            raise NotSupported(
                f"aten.{note} reduces a scan's result; a scan may feed elementwise ops and the "
                "outputs only"
            )
        if self.structure == "total" and tile and any(d in self.reduced for d in deps):
            raise NotSupported(
                f"aten.{note} uses a whole-tensor reduction's result elementwise (a second pass "
                "over the tensor): only one level of whole-tensor reductions is supported"
            )
        target = self.fresh()
        reduced = any(d in self.reduced for d in deps)
        if reduce is not None or reduced:
            self.reduced.add(target)
        if tile:
            self.tile_vars.add(target)
        if scan is not None or any(d in self.scanned for d in deps):
            self.scanned.add(target)
        self.prog.stmts.append(
            emit.Stmt(target, expr, tile, deps, note, reduce, reduced, scan, reduce_dtype)
        )
        return target

    # -- walking the graph
    def build(self) -> emit.Program:
        for node, name in zip(self.placeholders, self.params, strict=True):
            if node not in self.prologue:
                self.input(node, name)
        for node in self.placeholders:  # read by elementwise ops as they are
            if node in self.broadcast_ends:
                self.broadcast_value(node)
        for node in self.nodes:
            if node in self.prologue or node in self.windowed:
                continue
            if node is self.gemm_node:
                self.gemm_value(node)
            elif node.op == "call_function":
                self.call(node)
            elif node.op == "output":
                self.output(node)
        self.sizes()
        if self.stores:
            self.check_stores()
        self.prog.ramps = bool(self.ramp_exprs)
        return self.prog

    def check_stores(self) -> None:
        """A buffer the kernel reads and stores into must be read only where the same program
        stores it, before it does: flat or along its row, not through a gather, a lookup, an
        index map, a matrix multiply, or by several programs that share one of its values."""
        assert self.stores is not None
        by_name = dict(zip(self.params, self.placeholders, strict=True))
        for name in self.stores.buffers:
            node = by_name[name]
            if not node.users:
                continue
            why = ""
            if self.structure == "gemm":
                why = "a matrix multiply's epilogue"
            elif any(
                node in where for where in (self.windowed, self.tables, self.wide, self.broadcasts)
            ):
                why = "an index map, a row lookup, a slice or a broadcast"
            elif any(self._reads_from(g, node) for g in self.nodes if shp.packet(g) == "gather"):
                why = "a gather"
            elif self.kind(node).name != "full" and emit.columns_tiled(self.prog):
                why = f"programs that share its {self.kind(node).name} values"
            if why:
                raise NotSupported(
                    f"the kernel reads {name}, which it also stores into, through {why}; a "
                    "program could read a value another has already overwritten"
                )

    def _check_scalar_store(self, new: Node, into: str) -> None:
        """A one-element buffer's new value in the row structure (a Model's count of batches
        seen): row 0's program stores it, every program computes it. Another program may read
        the buffer after row 0 stored it, so what reads the buffer must compute that value
        only (nothing else the kernel stores may depend on it)."""
        buffer = dict(zip(self.params, self.placeholders, strict=True))[into]
        feeds = {buffer}
        todo = [buffer]
        while todo:
            for user in todo.pop().users:
                if user.op == "output" or user in feeds:
                    continue
                feeds.add(user)
                todo.append(user)
        stored = {a for a in self.nodes[-1].all_input_nodes if a in feeds}
        if stored != {new} or any(u.op != "output" for u in new.users):
            raise NotSupported(
                f"the reference writes one value into {into} and reads it elsewhere; the row "
                "programs would read it while the first one stores it"
            )

    def _reads_from(self, node: Node, source: Node) -> bool:
        """Whether `node`'s first argument is `source` through views and casts."""
        arg = node.args[0]
        while (
            isinstance(arg, Node) and arg is not source and shp.packet(arg) in VIEWS | CONVERSIONS
        ):
            arg = arg.args[0]
        return arg is source

    def input(self, node: Node, name: str) -> None:
        if not node.users:
            return
        if node in self.windowed:
            return self.window_input(node, name)
        if node in self.broadcasts:
            return self.broadcast_input(node, name)
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            raise NotSupported(f"parameter {name} is used in the graph but is not a tensor")
        if val.dtype not in emit.TL_DTYPES:
            raise NotSupported(
                f"parameter {name} has dtype {val.dtype}, which the generator does not load"
            )
        var = emit.safe_name(name, self.taken | self.vars)
        self.vars.add(var)
        if node in self.tables:  # read by lookups only, at rows an index chooses
            if any(shp.tensor_vals(n[self.index[node]])[0].dim() != 2 for n in self.per_graph):
                raise NotSupported(f"input {name} is looked up by rows but is not 2-d")
            param = emit.Param(name, var, "wide", val.dtype)
            self.prog.inputs.append(param)
            self.input_params[node] = param
            self.prog.symbols[f"{name}_row_stride"] = f"{name}.stride(-2)"
            return
        kind = self.kind(node)
        group = f"group_{kind.lead}" if kind.name.startswith("batch") else ""
        param = emit.Param(name, var, kind.name, val.dtype, group)
        self.prog.inputs.append(param)
        self.input_params[node] = param
        if group:
            self.groups.add(kind.lead)
        if param.kind == "wide" and self.structure == "gemm":
            raise NotSupported(f"input {name} is neither an operand nor the output's shape")
        if param.kind == "wide":
            self.wide[node] = param
            self.prog.symbols[f"{name}_row_stride"] = f"{name}.stride(-2)"
            return
        if kind.tile:
            self.tile_vars.add(var)
        self.values[node] = Value(var, val.dtype)

    def call(self, node: Node) -> None:
        if node in self.ramps:  # computed where it is read
            return
        if node in self.broadcasts:  # a view or cast of a broadcast input: loaded at its end
            if node in self.broadcast_ends:
                self.broadcast_value(node)
            return
        self.bind_ramps(node)
        name = shp.packet(node)
        if name == "getitem":
            return self.getitem(node)
        if name == "slice" and node.args[0] in self.wide:
            return self.slice_wide(node)
        if name == "slice" and shp.packet(node.args[0]) == "constant_pad_nd":
            return self.pad_slice(node)
        if name in SELECTS:  # outside a broadcast input's chain (those return above)
            raise NotSupported(
                f"aten.{op_name(node)} is {SELECT_WHY}: a select is translated only on the way "
                "from an input to the elementwise ops that read it (a column of a weight, say)"
            )
        if name in VIEWS:
            return self.view(node)
        if name in CONVERSIONS:
            return self.convert(node)
        if name in CONSTANTS:
            return self.constant(node)
        if name in COPIES:
            return self.copy(node)
        if name == "var_mean":
            return self.var_mean(node)
        if name in SCANS:
            return self.scan(node, SCANS[name])
        if name == "gather":
            return self.gather(node)
        if name in LOOKUPS:
            return self.lookup(node)
        if name in WINDOW_OPS:
            return self.window(node)
        if op_name(node) in ("max.dim", "min.dim"):
            return self.max_dim(node)
        if name in ARG_REDUCTIONS:
            return self.arg_reduce(node)
        if name.endswith("_") and name[:-1] in ELEMENTWISE:
            return self.in_place(node, name[:-1])
        self.compute(node, name)

    def output(self, node: Node) -> None:
        """The graph's outputs: the reference's result, then (a call that writes into its
        arguments) each written argument's new value, stored into the caller's buffer."""
        result = node.args[0]
        outs = list(result) if isinstance(result, tuple | list) else [result]
        self.prog.tuple_output = isinstance(result, tuple | list)
        buffers: list[str] = []
        if self.stores is not None:
            buffers = list(self.stores.buffers)
            self.prog.tuple_output = self.stores.tuple_result
            self.prog.returned = self.stores.returned
        first_buffer = len(outs) - len(buffers)
        for j, out in enumerate(outs):
            into = buffers[j - first_buffer] if j >= first_buffer else ""
            if not isinstance(out, Node) or out not in self.values:
                what = f"writes {out!r} into {into}" if into else f"returns {out!r}"
                raise NotSupported(f"the reference {what}, not a tensor it computes")
            kind = self.kind(out).name
            allowed = {
                "pointwise": ("full",),
                "row": ("full", "row"),
                "total": ("scalar",),
                "gemm": ("full",),
            }
            if kind == "scalar" and into and self.structure == "row":
                self._check_scalar_store(out, into)
            elif kind not in allowed[self.structure]:
                what = f"writes a {kind} tensor into {into}" if into else f"returns a {kind} tensor"
                raise NotSupported(
                    f"the reference {what}; in a {self.structure} kernel outputs must be "
                    f"{' or '.join(allowed[self.structure])}"
                )
            value = self.value(out)
            if not is_var(value.expr):
                what = f"writes a constant into {into}" if into else "returns a constant"
                raise NotSupported(f"the reference {what}")
            self.prog.outputs.append(emit.Output(value.expr, kind, value.dtype, "", into))
            self.out_nodes.append(out)
