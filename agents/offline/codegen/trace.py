"""Tracing a task's reference into aten graphs, and the checks on its op sequence.

The reference is traced with `make_fx` and the core-aten decompositions (plus torch's own rules
for leaky_relu, elu, layer norm and vector norms, which decompose into ops translated here) per
call (`Case`): at every CPU shape (real inputs), once more with other inputs, at every GPU shape
(fake inputs), and once per argument class with its float arguments moved (`perturb`). A call's
arguments are bound to the entry point's parameters, defaults filling the gaps; the graph's
inputs are its tensors (and a class task's weights), the other arguments are closed over. Within
an argument class the op sequence must be the same in every trace and made only of ops the
generator translates (`check_ops_known`); the op categories below are what the builder
dispatches on.
"""

from __future__ import annotations

import contextlib
import operator
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
from agents.offline.codegen.ops import ELEMENTWISE, REDUCTIONS, NotSupported
from benchmarks import Task

# ops that only rename, reshape or broadcast a value (no data moves in a flat or per-row view)
VIEWS = set(
    "view _unsafe_view reshape expand unsqueeze squeeze alias clone detach lift_fresh_copy "
    "contiguous view_copy expand_copy unsqueeze_copy squeeze_copy alias_copy slice permute".split()
)
CONVERSIONS = {"_to_copy", "convert_element_type", "to"}
# index-map ops: each output element reads its input at coordinates computed from its own
INDEX_MAPS = {"constant_pad_nd", "avg_pool2d", "max_pool2d_with_indices"}
CONSTANTS = {"full", "full_like", "scalar_tensor", "zeros", "ones", "zeros_like", "ones_like"}
_REFUSED = [
    ("mm bmm addmm baddbmm matmul _scaled_mm dot mv", "a matrix multiply"),
    ("convolution conv1d conv2d", "a convolution"),
    (
        "scatter scatter_add index_put index_add take",
        "indexing (a gather or scatter)",
    ),
    ("logcumsumexp cummax cummin", "a scan other than cumsum and cumprod"),
    ("sort topk argmax argmin unique", "a sort or arg-reduction"),
    ("max min", "a max/min with indices or over the whole tensor"),
    (
        "cat stack flip roll pixel_shuffle copy_ select split split_with_sizes transpose t",
        "data movement (a view or copy that reorders elements)",
    ),
    ("arange iota", "an index ramp (arange)"),
    ("empty empty_permuted empty_strided", "a buffer filled piece by piece (empty + copy_)"),
    ("_local_scalar_dense item", "a host read of a tensor value (.item())"),
    ("upsample_bilinear2d upsample_nearest2d", "resampling"),
    ("rand randn bernoulli rand_like randn_like normal", "random numbers"),
]
WHY_NOT: dict[str, str] = {op: why for ops, why in _REFUSED for op in ops.split()}

GEMMS = {"mm", "bmm", "addmm"}
# whole rows of a 2-d table chosen by an index (an embedding): table[ids], index_select on dim 0
LOOKUPS = {"index", "embedding", "index_select"}
# inclusive scans along the row, by the combine they use
SCANS = {"cumsum": "sum", "cumprod": "prod"}
# ops that work along a row (scans, gathers within it, row lookups): the row structure only
ALONG_ROW = set(SCANS) | LOOKUPS | {"gather"}


def decompositions() -> dict[Any, Any]:
    """The core-aten decompositions, plus torch's own rules for ops they leave whole that
    decompose into ops translated here (leaky_relu, elu, layer norm)."""
    from torch._decomp import core_aten_decompositions, get_decompositions

    aten = torch.ops.aten
    extra = get_decompositions(
        [aten.leaky_relu, aten.elu, aten.native_layer_norm, aten.linalg_vector_norm]
    )
    return {**core_aten_decompositions(), **extra}


@dataclass
class Case:
    """One traced call: the reference's graph on one call's arguments and their class."""

    shape: str  # the task shape it was traced at
    graph: GraphModule
    values: list[Any]  # the call's bound arguments (tensors, possibly fake, and other values)
    key: tuple[tuple[Any, ...], ...]  # its class (`classes.value_key` per parameter)
    real: bool  # traced from real inputs (else fake ones, at a GPU shape)
    perturbed: bool = False  # its float arguments moved off the call's own values


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
    from torch.fx.experimental.proxy_tensor import make_fx

    gen = torch.Generator().manual_seed(seed)
    mode = FakeTensorMode(allow_non_fake_inputs=True) if fake else contextlib.nullcontext()
    with mode:
        values = call_values(task, entry, dims, tuple(task.make_inputs(dims, "standard", gen)))
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
            return ref(*merged(ts))

        inputs = tensors
    # real inputs are traced in fake mode (a data-dependent reference fails); fake ones as they are
    with torch.no_grad():
        graph = make_fx(
            fn, decomposition_table=decompositions(), tracing_mode="real" if fake else "fake"
        )(*inputs)
    graph.graph.eliminate_dead_code()  # results nothing reads (a 1-D max pool's indices)
    graph.recompile()
    return Case(shape, graph, values, key, real=not fake, perturbed=perturbed)


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
        ):  # values and indices over a dim: the values are a reduction
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
            ELEMENTWISE.keys() | REDUCTIONS.keys() | VIEWS | CONVERSIONS | CONSTANTS | INDEX_MAPS
        )
        if name not in known | SCANS.keys() | LOOKUPS | {"var_mean", "getitem", "gather"}:
            raise NotSupported(f"aten.{op} is not an op the generator translates")
