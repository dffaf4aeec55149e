"""Tracing a task's reference into aten graphs, and the checks on its op sequence.

The reference is traced with `make_fx` and the core-aten decompositions at every CPU shape (real
inputs), once more with other inputs, and at every GPU shape (fake inputs). The op sequence must be
the same in every trace and made only of ops the generator translates (`check_ops_known`); the op
categories below are what the builder dispatches on.
"""

from __future__ import annotations

import operator

import torch
from torch.fx import GraphModule, Node

from agents.offline.codegen.ops import ELEMENTWISE, REDUCTIONS, NotSupported
from benchmarks import Task

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

GEMMS = {"mm", "bmm", "addmm"}


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
