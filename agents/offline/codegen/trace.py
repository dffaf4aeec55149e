"""Tracing a task's reference into aten graphs, and the checks on its op sequence.

The reference is traced with `make_fx` and the core-aten decompositions (plus torch's own rules
for leaky_relu, elu, layer norm and vector norms, which decompose into ops translated here) per
call (`Case`): at every CPU shape (real inputs), once more with other inputs, at every GPU shape
(fake inputs), and once per argument class with its float arguments moved (`perturb`). A call's
arguments are bound to the entry point's parameters, defaults filling the gaps; the graph's
inputs are its tensors (and a class task's weights), the other arguments are closed over; the
reference is called with its keyword-only arguments by keyword. Within an argument class the op
sequence must be the same in every trace and made only of ops the generator translates
(`check_ops_known`); the op categories below are what the builder dispatches on.

A call that writes into its arguments (`entry.Bound.writes`: an `out=` buffer, an input changed
in place, optimizer state) is traced through `torch.func.functionalize`, the reference writing
into copies of those arguments, so every write becomes a value (`aten.exp.out` becomes
`aten.exp`, `x.mul_(b)` becomes `aten.mul`, `out.copy_(v)` becomes `aten.copy`); the
decompositions apply after it. The graph returns the reference's own result, then each written
argument's new value (`Writes` says how the reference returned). A class task's Model that
writes into its own buffers (batch norm's running statistics, its count of batches) is found in
its first trace (`_mutated_inputs`) and traced again the same way, those buffers counted as
arguments past the call's (`Entry.arguments`).
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.fx import GraphModule, Node

from agents.offline.codegen.classes import value_key
from agents.offline.codegen.entry import (
    Entry,
    call_values,
    class_reference,
    model_at,
    weights_of,
)
from agents.offline.codegen.ops import ARG_REDUCTIONS, ELEMENTWISE, REDUCTIONS, NotSupported
from benchmarks import Task

# ops that only rename, reshape or broadcast a value (no data moves in a flat or per-row view)
VIEWS = set(
    "view _unsafe_view reshape expand unsqueeze squeeze alias clone detach lift_fresh_copy "
    "contiguous view_copy expand_copy unsqueeze_copy squeeze_copy alias_copy slice permute".split()
)
CONVERSIONS = {"_to_copy", "convert_element_type", "to"}
# index-map ops: each output element reads its input at coordinates computed from its own
INDEX_MAPS = {
    "constant_pad_nd",
    "avg_pool2d",
    "max_pool2d_with_indices",
    "avg_pool3d",
    "max_pool3d_with_indices",
}
CONSTANTS = {"full", "full_like", "scalar_tensor", "zeros", "ones", "zeros_like", "ones_like"}
# aten.copy(dst, src): src broadcast to dst's shape in dst's dtype (a functionalized `copy_`)
COPIES = {"copy"}
_REFUSED = [
    ("mm bmm addmm baddbmm matmul _scaled_mm dot mv", "a matrix multiply"),
    ("convolution conv1d conv2d", "a convolution"),
    (
        "scatter scatter_add index_put index_add take",
        "indexing (a gather or scatter)",
    ),
    ("logcumsumexp cummax cummin", "a scan other than cumsum and cumprod"),
    ("sort topk unique", "a sort"),
    ("max min", "a max/min with indices or over the whole tensor"),
    (
        "cat stack flip roll pixel_shuffle copy_ split split_with_sizes transpose t",
        "data movement (a view or copy that reorders elements)",
    ),
    ("iota", "an index ramp other than arange"),
    ("empty empty_permuted empty_strided", "a buffer filled piece by piece (empty + copy_)"),
    ("_local_scalar_dense item", "a host read of a tensor value (.item())"),
    ("upsample_bilinear2d upsample_nearest2d", "resampling"),
    ("rand randn bernoulli rand_like randn_like normal", "random numbers"),
]
WHY_NOT: dict[str, str] = {op: why for ops, why in _REFUSED for op in ops.split()}
# a view of one index along a dim (`w[:, k]`): translated only inside a broadcast input's chain
# (`agents.offline.codegen.broadcasts`: the load's index takes its offset), else data movement
SELECTS = {"select"}
SELECT_WHY = "data movement (a view or copy that reorders elements)"

GEMMS = {"mm", "bmm", "addmm"}
# whole rows of a 2-d table chosen by an index (an embedding): table[ids], index_select on dim 0
LOOKUPS = {"index", "embedding", "index_select"}
# index ramps: tensors of element indices, computed from each element's own coordinates
RAMPS = {"arange"}
# inclusive scans along the row, by the combine they use
SCANS = {"cumsum": "sum", "cumprod": "prod"}
# ops that work along a row (scans, gathers within it, row lookups): the row structure only
ALONG_ROW = set(SCANS) | LOOKUPS | {"gather"}


def decompositions() -> dict[Any, Any]:
    """The core-aten decompositions, plus torch's own rules for ops they leave whole that
    decompose into ops translated here (leaky_relu, elu, layer norm, vector norms, batch norm:
    its statistics a var_mean, its running statistics written with copy_), group norm as rows
    (`group_norm`), and min()/max() of a whole tensor as amin/amax over every dim."""
    from torch._decomp import core_aten_decompositions, get_decompositions

    aten = torch.ops.aten
    extra = get_decompositions(
        [
            aten.leaky_relu,
            aten.elu,
            aten.native_layer_norm,
            aten.linalg_vector_norm,
            aten.native_batch_norm,
            aten._native_batch_norm_legit,
            aten._native_batch_norm_legit_functional,
        ]
    )
    whole = {  # min()/max() of a whole tensor: its amin/amax (NaN propagates in both)
        aten.min.default: lambda x: aten.amin.default(x, []),
        aten.max.default: lambda x: aten.amax.default(x, []),
        aten.native_group_norm.default: group_norm,
    }
    return {**core_aten_decompositions(), **extra, **whole}


def group_norm(
    x: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    n: int,
    c: int,
    inner: int,
    groups: int,
    eps: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """aten.native_group_norm as rows: each (sample, group) pair's C / G * inner elements
    normalized by their biased variance and mean (a var_mean over the row, in fp32 for half
    inputs), then the per-channel weight and bias, each viewed as (1, C, 1, ...) (torch's own
    rule, on the CPU, folds the weight into a per-(sample, channel) scale through as_strided)."""
    acc = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    rows = acc.reshape(n, groups, c // groups * inner)
    var, mean = torch.var_mean(rows, dim=[2], correction=0, keepdim=True)
    rstd = torch.rsqrt(var + eps)
    out = ((rows - mean) * rstd).reshape(x.shape)
    channel = [1, c] + [1] * (x.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(channel)
    if bias is not None:
        out = out + bias.reshape(channel)
    return out.to(x.dtype), mean.reshape(n, groups), rstd.reshape(n, groups)


@dataclass(frozen=True)
class Writes:
    """The arguments a call writes into and what the reference returns then. The graph's
    outputs are the new tensors the reference returns (those that are not written arguments),
    then each written argument's new value, in `params` order."""

    # the written arguments' positions in `Entry.arguments` (the call's parameters, then a class
    # task's weights: a Model that updates its buffers)
    params: tuple[int, ...] = ()
    result: str = "one"  # "one" (a tensor) | "tuple" | "none"
    # per item returned: -1 a new tensor (the graph's next leading output), else the position
    # in `Entry.params` of the written argument it is
    items: tuple[int, ...] = ()


@dataclass
class Case:
    """One traced call: the reference's graph on one call's arguments and their class."""

    shape: str  # the task shape it was traced at
    graph: GraphModule
    values: list[Any]  # the call's bound arguments (tensors, possibly fake, and other values)
    key: tuple[tuple[Any, ...], ...]  # its class (`classes.value_key` per parameter)
    real: bool  # traced from real inputs (else fake ones, at a GPU shape)
    perturbed: bool = False  # its float arguments moved off the call's own values
    writes: Writes = Writes()  # the arguments it writes into (none for most calls)


def perturb(value: float) -> float:
    """Another value for a float argument: numbers that follow it in the trace are the argument
    (a kernel argument), numbers that do not are literals."""
    return value * 1.5 + 0.25


def _trace_one(
    task: Task,
    entry: Entry,
    dims: dict[str, int],
    shape: str,
    fake: bool,
    seed: int = 0,
    perturbed: bool = False,
) -> Case:
    from torch._subclasses.fake_tensor import FakeTensorMode

    gen = torch.Generator().manual_seed(seed)
    mode = FakeTensorMode(allow_non_fake_inputs=True) if fake else contextlib.nullcontext()
    with mode:
        bound = call_values(task, entry, dims, tuple(task.make_inputs(dims, "standard", gen)))
    values, written = bound.values, bound.writes
    if perturbed:
        values = [perturb(v) if type(v) is float else v for v in values]
    key = tuple(value_key(p.name, v) for p, v in zip(entry.params, values, strict=True))
    tensors = [v for v in values if isinstance(v, torch.Tensor)]

    def merged(ts: tuple[Any, ...]) -> list[Any]:
        it = iter(ts)
        return [next(it) if isinstance(v, torch.Tensor) else v for v in values]

    if entry.kind == "class":
        model = model_at(task, dims, fake)
        pairs = weights_of(model, set(entry.names))
        with mode:
            held = [torch.empty(t.shape, dtype=t.dtype) if fake else t for _, t in pairs]
        forward = class_reference(model, [w for w, _ in pairs], len(values))

        def fn(*flat: Any) -> Any:
            return forward(*merged(flat[: len(tensors)]), *flat[len(tensors) :])

        inputs = [*tensors, *held]
        if not entry.weights:
            entry.weights = [w for w, _ in pairs]
        elif [w.state for w in entry.weights] != [w.state for w, _ in pairs]:
            raise NotSupported("Model holds different parameters at different shapes")
    else:
        ref = task.entry_reference()  # the reference's own parameters, as `values` binds them

        def fn(*ts: Any) -> Any:
            args, kwargs = entry.split(merged(ts))
            return ref(*args, **kwargs)

        inputs = tensors
    # real inputs are traced in fake mode (a data-dependent reference fails); fake ones as they are
    mode_name = "real" if fake else "fake"
    how: list[Writes] = []
    slots = [sum(isinstance(v, torch.Tensor) for v in values[:i]) for i in written]
    graph = _traced(fn, inputs, slots, written, how, mode_name)
    if entry.kind == "class":
        # a Model that updates its own buffers (batch norm's running statistics): each one
        # written is an argument past the call's (`Entry.arguments`), traced as a write
        mutated = _mutated_inputs(graph)[len(tensors) :]
        if any(mutated):
            at = [k for k, m in enumerate(mutated) if m]
            written = tuple(len(entry.params) + k for k in at)
            slots = [len(tensors) + k for k in at]
            graph = _traced(fn, inputs, slots, written, how, mode_name)
    _inline_scalar_constants(graph)
    graph.graph.eliminate_dead_code()  # values nothing reads (a 1-D max pool's indices, batch
    # norm's reserve buffer)
    graph.recompile()
    writes = how[0] if how else Writes()
    if written:
        _check_writes(graph, entry, writes, slots)
    return Case(shape, graph, values, key, real=not fake, perturbed=perturbed, writes=writes)


def _traced(
    fn: Callable[..., Any],
    inputs: list[Any],
    slots: list[int],
    written: tuple[int, ...],
    how: list[Writes],
    mode_name: str,
) -> GraphModule:
    """`fn` traced on `inputs`; where it writes into the inputs at `slots` (the arguments at
    `written`), decomposed first, with the writes (the reference's and the decompositions' own,
    such as batch norm's running statistics) as ops on copies, then functionalized and traced
    again, every write now a value."""
    from torch.fx.experimental.proxy_tensor import make_fx

    if written:
        from torch.func import functionalize

        with torch.no_grad():
            writing = make_fx(
                _writes_returned(fn, slots, written, how),
                decomposition_table=decompositions(),
                tracing_mode=mode_name,
            )(*inputs)
        fn = functionalize(writing, remove="mutations")
    with torch.no_grad():
        return make_fx(fn, decomposition_table=decompositions(), tracing_mode=mode_name)(*inputs)


def _mutated_inputs(graph: GraphModule) -> list[bool]:
    """For each input of the graph, whether an op of it writes into it (through views)."""
    inputs = [n for n in graph.graph.nodes if n.op == "placeholder"]
    mutated: set[Node] = set()
    for node in graph.graph.nodes:
        schema = getattr(node.target, "_schema", None)
        if node.op != "call_function" or schema is None or not schema.is_mutable:
            continue
        for arg, value in zip(schema.arguments, node.args, strict=False):
            if arg.alias_info is None or not arg.alias_info.is_write:
                continue
            while isinstance(value, Node) and value.op == "call_function":
                if op_name(value).split(".")[0] not in VIEWS:
                    break
                value = value.args[0]
            if isinstance(value, Node) and value.op == "placeholder":
                mutated.add(value)
    return [n in mutated for n in inputs]


def _writes_returned(
    fn: Callable[..., Any], slots: list[int], written: tuple[int, ...], how: list[Writes]
) -> Callable[..., Any]:
    """`fn` (of the call's tensors) with the tensors at `slots` (the arguments at `written`)
    passed as copies and returned after the reference's own result; `how` gets what the
    reference returned."""

    def writing(*ts: Any) -> tuple[Any, ...]:
        args = list(ts)
        for s in slots:
            args[s] = args[s].clone()
        result = fn(*args)
        buffers = [args[s] for s in slots]
        shape = "none" if result is None else "tuple" if isinstance(result, tuple | list) else "one"
        returned = [] if result is None else list(result) if shape == "tuple" else [result]
        items = []
        for r in returned:
            if not isinstance(r, torch.Tensor):
                raise NotSupported(
                    f"the reference writes into arguments and returns a {type(r).__name__}; "
                    "the generated entry point returns tensors, written arguments or None"
                )
            items.append(next((i for i, b in zip(written, buffers, strict=True) if r is b), -1))
        how.clear()
        how.append(Writes(written, shape, tuple(items)))
        new = [r for r, i in zip(returned, items, strict=True) if i < 0]
        return (*new, *buffers)

    return writing


def _check_writes(graph: GraphModule, entry: Entry, writes: Writes, slots: list[int]) -> None:
    """Each written argument's new value (the graph's last outputs) has the argument's shape and
    dtype, and is computed: a value that is the argument itself means the trace lost the write
    (an op that updates its argument inside, as aten.native_batch_norm its running statistics)."""
    inputs = [n for n in graph.graph.nodes if n.op == "placeholder"]
    (outs,) = [n.args[0] for n in graph.graph.nodes if n.op == "output"]
    news = list(outs)[len(outs) - len(slots) :]
    for i, slot, new in zip(writes.params, slots, news, strict=True):
        name, old = entry.arguments[i], inputs[slot]
        seen = new
        while isinstance(seen, Node) and seen is not old and op_name(seen).split(".")[0] in VIEWS:
            seen = seen.args[0]
        if seen is old:
            raise NotSupported(
                f"the trace of the reference does not show how it writes into {name} (an op that "
                "updates its argument inside, such as batch norm's running statistics); the "
                "generated kernels would leave it unchanged"
            )
        have, want = new.meta["val"], old.meta["val"]
        if tuple(have.shape) != tuple(want.shape) or have.dtype != want.dtype:
            raise NotSupported(
                f"the reference writes a {tuple(have.shape)} {have.dtype} value into {name}, a "
                f"{tuple(want.shape)} {want.dtype} buffer (resized or cast); the generated kernels "
                "store values of the buffer's own shape and dtype"
            )


def _inline_scalar_constants(graph: GraphModule) -> None:
    """A one-element tensor the reference builds from a number (`torch.tensor(2.0)`) is traced
    as a constant attribute of the graph; it becomes `aten.scalar_tensor(value)`, a number the
    builder knows (a literal, or a kernel argument where it follows a float argument). Larger
    tensor constants are refused by name."""
    for node in list(graph.graph.nodes):
        if node.op != "get_attr":
            continue
        value = getattr(graph, str(node.target), None)
        if not isinstance(value, torch.Tensor):
            continue
        if value.numel() != 1 or value.dim() != 0:
            raise NotSupported(
                f"the reference builds a tensor constant of shape {tuple(value.shape)} "
                "(torch.tensor of a list); the generator takes numbers and tensor inputs"
            )
        number = value.item()  # a fake trace's constant has no value: that trace is skipped
        with graph.graph.inserting_before(node):
            new = graph.graph.call_function(
                torch.ops.aten.scalar_tensor.default, (number,), {"dtype": value.dtype}
            )
        new.meta = dict(node.meta)
        new.meta.setdefault("val", value)
        node.replace_all_uses_with(new)
        graph.graph.erase_node(node)


def trace_cases(task: Task, entry: Entry) -> list[Case]:
    """The reference traced at every CPU shape, once more at the first with other inputs (a
    number drawn from the inputs must not be baked into the kernel), at every GPU shape that fake
    inputs allow, and, for each class with float arguments, once with those moved."""
    cases = []
    runs = [(shape, 0) for shape in task.cpu_shapes] + [(task.cpu_shapes[0], 1)]
    for shape, seed in runs:
        try:
            cases.append(_trace_one(task, entry, shape.dims, shape.name, fake=False, seed=seed))
        except NotSupported:
            raise
        except Exception as exc:
            raise NotSupported(
                f"tracing the reference at CPU shape {shape.name} failed "
                f"({type(exc).__name__}: {_first_line(exc)}); data-dependent control flow or "
                "host reads (.item(), .tolist()) cannot become one kernel"
            ) from exc
    for shape in task.shapes:
        try:
            cases.append(_trace_one(task, entry, shape.dims, shape.name, fake=True))
        except NotSupported:
            raise
        except Exception:  # inputs that fake tensors cannot build: the CPU traces must do
            continue
    firsts: dict[tuple, Case] = {}
    for case in cases:
        if any(k == ("float",) for k in case.key):
            firsts.setdefault(case.key, case)
    for case in firsts.values():
        shape = next(s for s in (*task.cpu_shapes, *task.shapes) if s.name == case.shape)
        try:
            cases.append(
                _trace_one(task, entry, shape.dims, shape.name, fake=not case.real, perturbed=True)
            )
        except Exception:  # noqa: BLE001 - the reference refuses other values: they stay literals
            continue
    return cases


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


def op_sequence(graph: GraphModule) -> list[str]:
    """The graph's aten ops, in order."""
    return [op_name(n) for n in _calls(graph)]


def check_same_ops(graphs: list[GraphModule]) -> list[str]:
    """The op sequence, the same at every traced shape."""
    seqs = [op_sequence(g) for g in graphs]
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
        if op in (
            "max.dim",
            "min.dim",
        ):  # values and indices over a dim: a reduction and an arg-reduction
            continue
        if name.endswith("_") and name[:-1] in ELEMENTWISE:  # in place, on a value computed here
            continue
        if name in WHY_NOT:
            raise NotSupported(
                f"aten.{op} is {WHY_NOT[name]}: the generator translates elementwise ops, "
                "reductions, cumsum/cumprod, gathers and row lookups, pads and pools, and one "
                "matrix multiply"
            )
        known = (
            ELEMENTWISE.keys()
            | REDUCTIONS.keys()
            | ARG_REDUCTIONS.keys()
            | VIEWS
            | CONVERSIONS
            | CONSTANTS
            | INDEX_MAPS
            | COPIES
            | RAMPS
            | SELECTS
        )
        if name not in known | SCANS.keys() | LOOKUPS | {"var_mean", "getitem", "gather"}:
            raise NotSupported(f"aten.{op} is not an op the generator translates")
