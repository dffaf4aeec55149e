"""Rule-based code generation: a task's PyTorch reference, translated into a Triton kernel.

The offline policy's honest, model-free way to write a kernel. It reads only what every method
sees (the task's reference function, its inputs and shapes), never the task's own solution in
knowledge_base/kernels/.

How:
1. Trace the reference into aten ops with `make_fx` and the core-aten decompositions, on inputs
   for every CPU shape (real inputs, fake tracing: a reference that reads tensor values on the
   host or branches on them fails here), once more with other inputs, and at every GPU shape
   (fake inputs: no memory spent). The op sequence must be the same in all traces, and a number
   in the graph that differs between them must be one the launcher can compute (the row length
   N, the element count n, an input's dim, their reciprocals...), else the kernel would be right
   at one shape only.
2. Classify every tensor against the problem's shape D (`agents.offline.codegen.shapes`: full, per-row,
   per-column, per-batch, scalar, wide) and pick the structure:
   - pointwise: full and scalar tensors, elementwise ops: one flat kernel;
   - row: per-row/per-column/per-batch tensors, slices of a wide input's last dim, reductions
     over the last dim(s): one program per row (one tile, or a loop of tiles for long rows);
   - total: reductions of the whole tensor (losses, norms): partials per block, then one
     program reduces them and finishes;
   - gemm: one matrix multiply (mm, bmm, addmm) whose operands are inputs, possibly through
     permutes, no-op views and casts (the launcher replays the permutes and passes strides; the
     kernel casts at load), then an elementwise epilogue on the product (full, per-row,
     per-column, per-batch and scalar tensors, as in the row structure): one program per
     (BLOCK_M, BLOCK_N) tile (and batch), a K loop of masked loads and tl.dot accumulating in
     fp32 (IEEE products for fp32 operands: the fp32 GEMM tolerances reject TF32).
   Anything else (two matmuls, a prologue op before a matmul, a reduction after one,
   convolution, indexing, scans, data movement, reductions over other dims) raises NotSupported
   with the op or shape that stopped it.
3. Translate op by op (`agents.offline.codegen.ops`), in fp32, rounding where the reference holds a
   value in fp16/bf16/fp8, and write the module (`agents.offline.codegen.emit`). The result passes the
   judge's static check, or generate raises NotSupported.
"""

from __future__ import annotations

import math
import operator
import re
import textwrap
from dataclasses import dataclass
from typing import Any

import torch
from torch.fx import GraphModule, Node

from agents.offline.codegen import emit
from agents.offline.codegen import shapes as shp
from agents.offline.codegen.ops import (
    ELEMENTWISE,
    REDUCTIONS,
    NotSupported,
    literal,
    var_and_mean,
)
from benchmarks.harness.static_check import check_task_candidate
from benchmarks.task import Task

__all__ = ["Generated", "NotSupported", "generate"]


@dataclass
class Generated:
    source: str  # a complete candidate module (imports torch, triton, triton.language as tl)
    structure: str  # "pointwise", "row", "total" (whole-tensor reductions) or "gemm"
    ops: list[str]  # the aten ops translated, in order (for logs)


POINTWISE_DEFAULTS = {"BLOCK": 1024, "num_warps": 4}
ROW_DEFAULTS = {"num_warps": 4, "MAX_BLOCK_N": 8192}
GEMM_DEFAULTS = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}

# ops that only rename, reshape or broadcast a value (no data moves in a flat or per-row view)
VIEWS = set(
    "view _unsafe_view reshape expand unsqueeze squeeze alias clone detach lift_fresh_copy "
    "contiguous view_copy expand_copy unsqueeze_copy squeeze_copy alias_copy slice permute".split()
)
CONVERSIONS = {"_to_copy", "convert_element_type", "to"}
CONSTANTS = {"full", "full_like", "scalar_tensor", "zeros", "ones", "zeros_like", "ones_like"}
_REFUSED = [
    ("mm bmm addmm baddbmm matmul _scaled_mm dot mv", "a matrix multiply"),
    ("convolution conv1d conv2d", "a convolution"),
    (
        "index index_select gather scatter scatter_add embedding index_put index_add take",
        "indexing (a gather or scatter)",
    ),
    ("cumsum cumprod logcumsumexp cummax", "a scan"),
    ("sort topk argmax argmin unique", "a sort or arg-reduction"),
    ("max min", "a max/min with indices or over the whole tensor"),
    (
        "cat stack flip roll constant_pad_nd pixel_shuffle copy_ select split split_with_sizes "
        "transpose t",
        "data movement (a view or copy that reorders elements)",
    ),
    ("arange iota", "an index ramp (arange)"),
    ("empty empty_permuted empty_strided", "a buffer filled piece by piece (empty + copy_)"),
    ("_local_scalar_dense item", "a host read of a tensor value (.item())"),
    (
        "avg_pool2d max_pool2d_with_indices upsample_bilinear2d upsample_nearest2d",
        "pooling/resampling",
    ),
    ("rand randn bernoulli rand_like randn_like normal", "random numbers"),
]
WHY_NOT: dict[str, str] = {op: why for ops, why in _REFUSED for op in ops.split()}


# -- tracing ---------------------------------------------------------------------------------------


def _trace_one(task: Task, dims: dict[str, int], fake_inputs: bool, seed: int = 0) -> GraphModule:
    from torch._decomp import core_aten_decompositions
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    gen = torch.Generator().manual_seed(seed)
    if fake_inputs:
        with FakeTensorMode():
            args = task.make_inputs(dims, "standard", gen)
        mode = "real"  # already fake: make_fx traces through them
    else:
        args = task.make_inputs(dims, "standard", gen)
        mode = "fake"  # a data-dependent reference fails here
    fn = task.reference_for(dims)
    return make_fx(fn, decomposition_table=core_aten_decompositions(), tracing_mode=mode)(*args)


def trace(task: Task) -> list[GraphModule]:
    """The reference traced at every CPU shape, once more at the first with other inputs (a
    number drawn from the inputs must not be baked into the kernel), then at every GPU shape
    that fake inputs allow."""
    graphs = []
    runs = [(shape, 0) for shape in task.cpu_shapes] + [(task.cpu_shapes[0], 1)]
    for shape, seed in runs:
        try:
            graphs.append(_trace_one(task, shape.dims, fake_inputs=False, seed=seed))
        except Exception as exc:
            raise NotSupported(
                f"tracing the reference at CPU shape {shape.name} failed "
                f"({type(exc).__name__}: {_first_line(exc)}); data-dependent control flow or "
                "host reads (.item(), .tolist()) cannot become one kernel"
            ) from exc
    for shape in task.shapes:
        try:
            graphs.append(_trace_one(task, shape.dims, fake_inputs=True))
        except Exception:  # inputs that fake tensors cannot build: the CPU traces must do
            continue
    return graphs


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else ""


def op_name(node: Node) -> str:
    """'mul.Tensor' for aten.mul.Tensor; 'getitem' for operator.getitem."""
    if node.target is operator.getitem:
        return "getitem"
    packet = getattr(node.target, "overloadpacket", None)
    overload = getattr(node.target, "_overloadname", "")
    if packet is None:
        return str(getattr(node.target, "__name__", node.target))
    return f"{packet.__name__}.{overload}"


def _calls(graph: GraphModule) -> list[Node]:
    return [n for n in graph.graph.nodes if n.op == "call_function"]


def check_same_ops(graphs: list[GraphModule]) -> list[str]:
    """The op sequence, the same at every traced shape."""
    seqs = [[op_name(n) for n in _calls(g)] for g in graphs]
    for seq in seqs[1:]:
        if seq != seqs[0]:
            diff = next(
                (i for i, (a, b) in enumerate(zip(seqs[0], seq, strict=False)) if a != b),
                min(len(seq), len(seqs[0])),
            )
            raise NotSupported(
                f"the reference runs different ops at different shapes (from op {diff}: "
                f"{seqs[0][diff : diff + 3]} vs {seq[diff : diff + 3]}); one kernel cannot follow it"
            )
    return seqs[0]


GEMMS = {"mm", "bmm", "addmm"}


def check_ops_known(ops: list[str]) -> None:
    matmuls = [
        op for op in ops if op.split(".")[0] in WHY_NOT and "matrix" in WHY_NOT[op.split(".")[0]]
    ]
    if len(matmuls) > 1:
        raise NotSupported(
            f"the reference runs {len(matmuls)} matrix multiplies (aten.{', aten.'.join(matmuls)}); "
            "the gemm structure translates one (mm, bmm or addmm) and an elementwise epilogue"
        )
    for op in ops:
        name = op.split(".")[0]
        if name in GEMMS and matmuls == [op]:
            continue
        if name in WHY_NOT:
            raise NotSupported(
                f"aten.{op} is {WHY_NOT[name]}: the generator translates elementwise ops and "
                "reductions only"
            )
        known = ELEMENTWISE.keys() | REDUCTIONS.keys() | VIEWS | CONVERSIONS | CONSTANTS
        if name not in known | {"var_mean", "getitem"}:
            raise NotSupported(f"aten.{op} is not an op the generator translates")


# -- the builder -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Value:
    expr: str  # a kernel variable or a literal
    dtype: torch.dtype  # the reference's dtype for it


@dataclass(frozen=True)
class _Operand:
    """A matrix multiply operand: input `node`, viewed by `views` (launcher text, e.g.
    '.permute(1, 0)'), loaded in `dtype` and cast to `dot_dtype` for tl.dot."""

    node: Node
    views: str
    dtype: torch.dtype
    dot_dtype: torch.dtype


class _Builder:
    """Walks the graph of the first trace (the others, node for node, vouch for its numbers) and
    builds the program of statements `codegen_emit` writes out."""

    def __init__(self, task: Task, graphs: list[GraphModule], ops: list[str]) -> None:
        self.graphs = graphs
        self.per_graph = [list(g.graph.nodes) for g in graphs]
        self.nodes = self.per_graph[0]
        self.index = {n: i for i, n in enumerate(self.nodes)}
        self.domains = [shp.domain(g) for g in graphs]
        self.gemm_node = next(
            (n for n in self.nodes if n.op == "call_function" and shp.packet(n) in GEMMS), None
        )
        self.prologue: set[Node] = set()
        self.operands: list[_Operand] = []
        if self.gemm_node is not None:
            self.operands = [self._operand(i) for i in range(2)]
            for n in self.prologue:
                if any(u not in self.prologue and u is not self.gemm_node for u in n.users):
                    raise NotSupported(
                        f"{shp.describe(n)} feeds the matrix multiply and the epilogue; the gemm "
                        "structure reads an input either as an operand or in the epilogue"
                    )
        skip = {self.index[n] for n in self.prologue}
        self.kinds = shp.node_kinds(graphs, self.domains, skip)
        self.structure = self._structure()
        self.params = [
            name
            for name, p in task.signature().parameters.items()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        clash = emit.launcher_clash(self.params)
        if self.structure == "gemm":
            clash = clash or next((p for p in self.params if p in emit.GEMM_WORDS), None)
        if clash:
            raise NotSupported(f"parameter {clash!r} has a name the generated launcher uses itself")
        self.placeholders = [n for n in self.nodes if n.op == "placeholder"]
        if len(self.placeholders) != len(self.params):
            raise NotSupported(
                f"the reference takes {len(self.params)} parameters but traces into "
                f"{len(self.placeholders)} inputs (a list or tuple argument)"
            )
        self.prog = emit.Program(
            entry_point=task.entry_point,
            structure=self.structure,
            params=self.params,
            primary="",
            inputs=[],
            stmts=[],
            outputs=[],
            ops=ops,
        )
        self.values: dict[Node, _Value | list[_Value]] = {}
        self.wide: dict[Node, emit.Param] = {}  # wide inputs (and views of them), read by slices
        self.out_nodes: list[Node] = []
        self.groups: set[int] = set()  # leads of the batch kinds read
        self.vars: set[str] = set()
        self.tile_vars: set[str] = set()
        self.reduced: set[str] = set()  # variables that depend on a reduction
        self.counter = 0
        self.taken = {f"{p}_ptr" for p in self.params}
        if self.structure == "gemm":
            self.taken |= emit.GEMM_WORDS
            self._gemm_program()

    # -- gemm: the matrix multiply's operands (inputs through transposes and casts)
    def _operand(self, i: int) -> _Operand:
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
            elif op in VIEWS and op not in ("expand", "expand_copy", "slice"):
                if not self.same_shape(node, node.args[0]):
                    raise NotSupported(
                        f"operand {i} of aten.{op_name(mm)} is reshaped (aten.{op_name(node)}); "
                        "only transposes and casts of an input may feed the matrix multiply"
                    )
            else:
                raise NotSupported(
                    f"operand {i} of aten.{op_name(mm)} is computed by aten.{op_name(node)}: a "
                    "prologue other than casts and transposes of an input is not supported"
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
        for c in reversed(chain):
            if shp.packet(c) == "permute":
                dims = [int(d) for d in self.lit(c, 1)]
                views.append(f".permute({', '.join(map(str, dims))})")
        ndim = 3 if shp.packet(mm) == "bmm" else 2
        if node.meta["val"].dim() != ndim:
            raise NotSupported(f"operand {i} of aten.{op_name(mm)} is not {ndim}-D")
        if dot_dtype not in (torch.float32, torch.float16, torch.bfloat16) or (
            not src_dtype.is_floating_point
        ):
            raise NotSupported(
                f"aten.{op_name(mm)} of {src_dtype} inputs in {dot_dtype}: the gemm structure "
                "multiplies fp32, fp16 and bf16 inputs"
            )
        return _Operand(placeholder, "".join(views), src_dtype, dot_dtype)

    def _structure(self) -> str:
        reduces = any(shp.is_reduction(n) for n in self.nodes)
        if self.gemm_node is not None:
            if reduces:
                red = next(n for n in self.nodes if shp.is_reduction(n))
                raise NotSupported(
                    f"aten.{op_name(red)} reduces in a matrix multiply's epilogue; the gemm "
                    "structure takes elementwise epilogues only"
                )
            return "gemm"
        if reduces and len(self.domains[0]) < 2:
            return "total"
        if reduces or any(k.name not in ("full", "scalar") for k in self.kinds if k):
            return "row"
        return "pointwise"

    def kind(self, node: Node) -> shp.Kind:
        kind = self.kinds[self.index[node]]
        if kind is None:
            raise NotSupported(f"{shp.describe(node)} is used as a tensor but is not one")
        return kind

    def value(self, node: Node) -> _Value:
        if node in self.wide:
            raise NotSupported(
                f"{shp.describe(node)} is used whole although its rows are not N long; only "
                "slices of its last dim are supported"
            )
        val = self.values[node]
        if isinstance(val, list):
            raise NotSupported(f"{shp.describe(node)} is a tuple used as a tensor")
        return val

    # -- variables and statements
    def fresh(self) -> str:
        while f"v{self.counter}" in self.vars:
            self.counter += 1
        self.vars.add(f"v{self.counter}")
        return f"v{self.counter}"

    def deps(self, expr: str) -> tuple[str, ...]:
        words = dict.fromkeys(re.findall(r"[A-Za-z_]\w*", expr))
        return tuple(w for w in words if w in self.vars)

    def add(self, expr: str, tile: bool | None, note: str, reduce: str | None = None) -> str:
        """A statement `v = expr`; a tile when `tile` says so or (None) when it reads a tile."""
        deps = self.deps(expr)
        if tile is None:
            tile = reduce is None and any(d in self.tile_vars for d in deps)
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
        self.prog.stmts.append(emit.Stmt(target, expr, tile, deps, note, reduce, reduced))
        return target

    # -- numbers that must mean the same at every shape
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
        found = self.input_dim(values)
        if found:
            return found
        raise NotSupported(
            f"a number in aten.{op_name(node)} changes with the shape or the inputs ({values}) "
            "and is not a size the kernel knows (the row length N or the element count n)"
        )

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
        ]

    # -- walking the graph
    def _gemm_program(self) -> None:
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
        expr = _rounded(expr, dtype)
        if not _is_var(expr):
            expr = self.add(expr, True, op_name(node))
        self.values[node] = _Value(expr, dtype)

    def build(self) -> emit.Program:
        for node, name in zip(self.placeholders, self.params, strict=True):
            if node not in self.prologue:
                self.input(node, name)
        for node in self.nodes:
            if node in self.prologue:
                continue
            if node is self.gemm_node:
                self.gemm_value(node)
            elif node.op == "call_function":
                self.call(node)
            elif node.op == "output":
                self.output(node)
        self.sizes()
        return self.prog

    def input(self, node: Node, name: str) -> None:
        if not node.users:
            return
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            raise NotSupported(f"parameter {name} is used in the graph but is not a tensor")
        if val.dtype not in emit.TL_DTYPES:
            raise NotSupported(
                f"parameter {name} has dtype {val.dtype}, which the generator does not load"
            )
        var = emit.safe_name(name, self.taken | self.vars)
        self.vars.add(var)
        kind = self.kind(node)
        group = f"group_{kind.lead}" if kind.name.startswith("batch") else ""
        param = emit.Param(name, var, kind.name, val.dtype, group)
        self.prog.inputs.append(param)
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
        self.values[node] = _Value(var, val.dtype)

    def call(self, node: Node) -> None:
        name = shp.packet(node)
        if name == "getitem":
            return self.getitem(node)
        if name == "slice" and node.args[0] in self.wide:
            return self.slice_wide(node)
        if name in VIEWS:
            return self.view(node)
        if name in CONVERSIONS:
            return self.convert(node)
        if name in CONSTANTS:
            return self.constant(node)
        if name == "var_mean":
            return self.var_mean(node)
        self.compute(node, name)

    def dtype_of(self, node: Node) -> torch.dtype:
        return shp.tensor_vals(node)[0].dtype

    def same_shape(self, a: Node, b: Node) -> bool:
        return all(
            tuple(nodes[self.index[a]].meta["val"].shape)
            == tuple(nodes[self.index[b]].meta["val"].shape)
            for nodes in self.per_graph
        )

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
        self.values[node] = _Value(self.add(expr, True, op_name(node)), param.dtype)

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
        value = self.value(src)
        expr, have = value.expr, value.dtype
        if want is None or want == have:
            self.values[node] = value
            return
        if want not in emit.TL_DTYPES:
            raise NotSupported(
                f"aten.{op_name(node)} converts to {want}, which the generator does not emit"
            )
        if want.is_floating_point:
            if not have.is_floating_point:
                expr = f"{expr}.to(tl.float32)"
            elif want in (torch.float32, torch.float64):  # already held in fp32
                self.values[node] = _Value(expr, want)
                return
        elif want == torch.bool:
            expr = f"{expr} != 0"
        else:
            expr = f"{expr}.to({emit.TL_DTYPES[want]})"
        expr = _rounded(expr, want)
        self.values[node] = _Value(self.add(expr, None, op_name(node)), want)

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
        self.values[node] = _Value(text, dtype)

    def getitem(self, node: Node) -> None:
        src, index = node.args
        parts = self.values.get(src)
        if not isinstance(parts, list):
            raise NotSupported(f"getitem on {shp.describe(src)}, which is not a tuple it knows")
        self.values[node] = parts[index]

    def var_mean(self, node: Node) -> None:
        self.check_reduction(node, "var_mean")
        var, mean = var_and_mean(_Call(self, node))
        dtypes = [v.dtype for v in shp.tensor_vals(node)]
        v = self.add(_rounded(var, dtypes[0]), False, op_name(node))
        m = self.add(_rounded(mean, dtypes[1]), False, op_name(node))
        self.values[node] = [_Value(v, dtypes[0]), _Value(m, dtypes[1])]

    def check_reduction(self, node: Node, name: str) -> None:
        src, out = self.kind(node.args[0]).name, self.kind(node).name
        want = "scalar" if self.structure == "total" else "row"
        if src != "full" or out != ("full" if name in ("_softmax", "_log_softmax") else want):
            raise NotSupported(
                f"aten.{op_name(node)} reduces a {src} tensor to a {out} one; only reductions of "
                "the full tensor over its last dim are supported"
            )

    def compute(self, node: Node, name: str) -> None:
        if name in REDUCTIONS:
            self.check_reduction(node, name)
            expr = REDUCTIONS[name](_Call(self, node))
        else:
            self.check_broadcast(node)
            expr = ELEMENTWISE[name](_Call(self, node))
        dtype = self.dtype_of(node)
        expr = _rounded(expr, dtype)
        if not _is_var(expr):  # a bare variable needs no statement
            expr = self.add(expr, self.kind(node).tile, op_name(node))
        self.values[node] = _Value(expr, dtype)

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

    def output(self, node: Node) -> None:
        result = node.args[0]
        outs = list(result) if isinstance(result, tuple | list) else [result]
        self.prog.tuple_output = isinstance(result, tuple | list)
        for out in outs:
            if not isinstance(out, Node) or out not in self.values:
                raise NotSupported(f"the reference returns {out!r}, not a tensor it computes")
            kind = self.kind(out).name
            allowed = {
                "pointwise": ("full",),
                "row": ("full", "row"),
                "total": ("scalar",),
                "gemm": ("full",),
            }
            if kind not in allowed[self.structure]:
                raise NotSupported(
                    f"the reference returns a {kind} tensor; in a {self.structure} kernel "
                    f"outputs must be {' or '.join(allowed[self.structure])}"
                )
            value = self.value(out)
            if not _is_var(value.expr):
                raise NotSupported("the reference returns a constant")
            self.prog.outputs.append(emit.Output(value.expr, kind, value.dtype, ""))
            self.out_nodes.append(out)

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
            if self.structure == "row":
                self.prog.width = sizes.dim(n_values)
            last = ("N", n_values)
        for lead in sorted(self.groups):  # rows sharing one value of a batch tensor
            dims = [
                sizes.dim([d[j] for d in self.domains])
                for j in range(lead, len(self.domains[0]) - 1)
            ]
            self.prog.symbols[f"group_{lead}"] = " * ".join(dims)
        outs = []
        for out, o in zip(self.out_nodes, self.prog.outputs, strict=True):
            shapes_t = [tuple(nodes[self.index[out]].meta["val"].shape) for nodes in self.per_graph]
            outs.append(emit.Output(o.var, o.kind, o.dtype, sizes.shape(shapes_t, last)))
        self.prog.outputs = outs


def _is_var(expr: str) -> bool:
    return re.fullmatch(r"[A-Za-z_]\w*", expr) is not None and expr not in ("True", "False")


def _constant_value(text: str) -> float:
    """The number a constant's kernel text stands for ('True', '(-1)', '0.5', 'float("inf")')."""
    if text in ("True", "False"):
        return float(text == "True")
    if text.startswith("float("):
        return float(text[7:-2])
    return float(text.strip("()"))


def _rounded(expr: str, dtype: torch.dtype) -> str:
    """The kernel holds floats in fp32; a value the reference holds in a narrower float type
    (fp16, bf16, fp8) is rounded to it."""
    if dtype.is_floating_point and dtype.itemsize < 4:
        return f"({expr}).to({emit.TL_DTYPES[dtype]}).to(tl.float32)"
    return expr


class _Call:
    """One aten call as `codegen_ops` sees it (see codegen_ops.Call)."""

    def __init__(self, builder: _Builder, node: Node) -> None:
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
            if not _is_var(value.expr):  # a constant
                return literal(_constant_value(value.expr))
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
            k = shp.trailing_dims(here)
            shape = tuple(here.args[0].meta["val"].shape)
            if k is None or math.prod(shape[k:]) != self.b.domains[g][-1]:
                raise NotSupported(
                    f"aten.{self.op} reduces over dims {here.args[1]} of a tensor of shape "
                    f"{shape}; only the last dims (the row) are supported"
                )


# -- the module ------------------------------------------------------------------------------------


def module_source(task: Task, prog: emit.Program) -> str:
    stem = prog.entry_point.lstrip("_")
    if prog.structure == "pointwise":
        kernel = f"_{stem}_kernel"
        kernels = [emit.pointwise_kernel(prog, kernel)]
        launcher = emit.pointwise_launcher(prog, kernel, POINTWISE_DEFAULTS)
        tunables = emit.POINTWISE_TUNABLES
        shape_doc = (
            "Structure: pointwise. The tensors are flattened; each program handles BLOCK contiguous\n"
            "elements, the last block masked, with int64 offsets."
        )
    elif prog.structure == "total":
        partial, finish = f"_{stem}_partial_kernel", f"_{stem}_finish_kernel"
        kernels = emit.total_kernels(prog, partial, finish)
        launcher = emit.total_launcher(prog, partial, finish, POINTWISE_DEFAULTS)
        tunables = emit.POINTWISE_TUNABLES
        shape_doc = (
            "Structure: total (reductions of the whole tensor). Each program of the first kernel\n"
            "reduces BLOCK elements (the last block masked) to one partial; one program of the\n"
            "second reduces the partials in a fixed order (deterministic) and finishes."
        )
    elif prog.structure == "gemm":
        kernel = f"_{stem}_gemm_kernel"
        kernels = [emit.gemm_kernel(prog, kernel)]
        launcher = emit.gemm_launcher(prog, kernel, GEMM_DEFAULTS)
        tunables = emit.GEMM_TUNABLES
        shape_doc = (
            "Structure: gemm. One program per BLOCK_M x BLOCK_N tile of the product (and per batch\n"
            "for bmm); K is walked in BLOCK_K steps with masked loads of the strided operands and\n"
            "tl.dot accumulating in fp32 (IEEE fp32 products for fp32 operands); the epilogue runs\n"
            "on the accumulator tile, per-row and per-column tensors broadcast over it."
        )
    else:
        one, looped = f"_{stem}_row_kernel", f"_{stem}_looped_kernel"
        kernels = [emit.row_kernel(prog, one), emit.looped_row_kernel(prog, looped)]
        launcher = emit.row_launcher(prog, one, looped, ROW_DEFAULTS)
        tunables = emit.ROW_TUNABLES
        shape_doc = (
            "Structure: row. One program per row of the last dim (N columns). A row that fits in\n"
            "MAX_BLOCK_N columns is one tile of next_power_of_2(N); reductions put their identity in\n"
            "the masked lanes. A longer row is walked in tiles: one pass per reduction, one to store."
        )
    meta = {
        "tunables": tunables,
        "generated_by": "agents/offline/codegen/generate.py",
        "structure": prog.structure,
    }
    doc = (
        f'"""{task.id}: generated from the task\'s PyTorch reference by agents/offline/codegen/generate.py.\n\n'
        f"{textwrap.fill('Reference ops (aten, in order): ' + ', '.join(prog.ops) + '.', 96)}\n"
        f"{shape_doc}\n"
        "Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded\n"
        "where it rounds them; one cast to the output dtype on store.\n"
        f"Tunables: {', '.join(tunables)}.\n"
        '"""\n'
    )
    head = (
        f"{doc}\nimport torch\nimport triton\nimport triton.language as tl\n\nKB_META = {meta!r}\n"
    )
    parts = [head, *emit.helper_sources(prog.helpers), *kernels, launcher]
    return "\n\n".join(p.rstrip("\n") + "\n" for p in parts)


def generate(task: Task) -> Generated:
    """A Triton candidate for `task`, translated from its reference. Raises NotSupported."""
    if task.entry_kind != "function":
        raise NotSupported(
            f"task {task.id} has a class entry point ({task.entry_point}); the generator writes functions"
        )
    graphs = trace(task)
    ops = check_same_ops(graphs)
    check_ops_known(ops)
    prog = _Builder(task, graphs, ops).build()
    try:
        source = module_source(task, prog)
    except ValueError as exc:  # a statement the kernel's passes cannot schedule
        raise NotSupported(f"the generator could not schedule the kernel: {exc}") from exc
    verdict = check_task_candidate(source, task, filename=f"<generated for {task.id}>")
    if not verdict.ok:
        raise NotSupported(
            f"the generated module fails the static check: {verdict.error_class}: {verdict.message}"
        )
    return Generated(source=source, structure=prog.structure, ops=ops)
