"""Splitting a reference at its matrix multiply: a GEMM followed by a reduction (Linear then sum,
softmax or a norm over the features, as KernelBench's level 2 writes them) becomes two kernels.

The gemm structure tiles the product over (BLOCK_M, BLOCK_N), so its epilogue cannot reduce a
whole row; the row structure reduces rows but does not multiply matrices. So the traces are cut
in two: stage 1 is the multiply and what it needs (its operands through views and casts), and
writes the product to memory in the reference's dtype (where the reference holds it); stage 2
is everything after, reading the product as one more input. The launcher runs the two kernels
in order. The product makes one round trip through memory that a fused kernel would avoid.
"""

from __future__ import annotations

from torch.fx import Graph, GraphModule, Node

from agents.offline.codegen import shapes as shp
from agents.offline.codegen.ops import NotSupported
from agents.offline.codegen.trace import CONVERSIONS, GEMMS, VIEWS


def needs_split(graph: GraphModule) -> bool:
    """One matrix multiply with a reduction after it (not among its operands)."""
    nodes = list(graph.graph.nodes)
    mms = [n for n in nodes if n.op == "call_function" and shp.packet(n) in GEMMS]
    if len(mms) != 1:
        return False
    before = _ancestors(mms[0])
    return any(shp.is_reduction(n) and n not in before for n in nodes)


def _ancestors(node: Node) -> set[Node]:
    seen: set[Node] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        todo += [a for a in n.all_input_nodes]
    return seen


def _copy(graph: Graph, node: Node, env: dict[Node, Node]) -> Node:
    new = graph.node_copy(node, lambda n: env[n])
    new.meta = dict(node.meta)
    env[node] = new
    return new


def split(graph: GraphModule, product: str) -> tuple[GraphModule, GraphModule]:
    """(stage 1, stage 2) of one trace. Stage 1 takes the trace's inputs and returns the product;
    stage 2 takes the trace's inputs and then the product (named `product`) and returns what the
    trace returns. Values of stage 1 other than the product that stage 2 reads must be views or
    casts of inputs (stage 2 recomputes them), else NotSupported."""
    nodes = list(graph.graph.nodes)
    mm = next(n for n in nodes if n.op == "call_function" and shp.packet(n) in GEMMS)
    first = _ancestors(mm)
    inputs = [n for n in nodes if n.op == "placeholder"]

    one = Graph()
    env: dict[Node, Node] = {}
    for n in inputs:
        _copy(one, n, env)
    for n in nodes:
        if n in first and n.op == "call_function":
            _copy(one, n, env)
    one.output(env[mm])

    two = Graph()
    env = {}
    for n in inputs:
        _copy(two, n, env)
    held = two.placeholder(product)
    held.meta = {"val": mm.meta["val"]}
    env[mm] = held
    rest = [n for n in nodes if n not in first and n.op == "call_function"]
    shared = [
        n
        for n in nodes
        if n in first
        and n.op == "call_function"
        and n is not mm
        and any(u not in first for u in n.users)
    ]
    for n in shared:
        if shp.packet(n) not in VIEWS | CONVERSIONS:
            raise NotSupported(
                f"the result of aten.{shp.packet(n)} feeds the matrix multiply and what follows "
                "its reduction; the two-stage split recomputes only views and casts of inputs"
            )
    keep = {a for n in shared for a in _ancestors(n) if a.op == "call_function"}
    for n in nodes:
        if n in keep and n not in env:
            _copy(two, n, env)
    for n in rest:
        _copy(two, n, env)
    out = next(n for n in nodes if n.op == "output")
    two.output(_map(out.args[0], env))
    return GraphModule(graph, one), GraphModule(graph, two)


def _map(value: object, env: dict[Node, Node]) -> object:
    if isinstance(value, Node):
        return env[value]
    if isinstance(value, tuple | list):
        return type(value)(_map(v, env) for v in value)
    return value
