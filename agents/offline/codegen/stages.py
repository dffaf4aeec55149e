"""Splitting a reference in two kernels where one structure cannot hold it all.

- gemm>row: a GEMM followed by a reduction (Linear then sum, softmax or a norm over the
  features, as KernelBench's level 2 writes them). The gemm structure tiles the product over
  (BLOCK_M, BLOCK_N), so its epilogue cannot reduce a whole row; the row structure reduces rows
  but does not multiply matrices. Stage 1 is the multiply and what it needs (its operands
  through views and casts), and writes the product to memory in the reference's dtype (where
  the reference holds it); stage 2 is everything after, reading the product as one more input.
- row>total: reductions over the row followed by a reduction of their per-row results to one
  value (a loss: log-sum-exp per row, then the mean over rows). The row structure runs one
  program per row and cannot combine rows; the total structure combines everything but holds
  no rows. Stage 1 computes the one per-row value that the whole-tensor reductions read and
  that depends on the row reductions, and writes it ([R], fp32 where the reference holds it so);
  stage 2 reduces it, recomputing the other per-row values it reads (functions of the inputs
  only, such as a mask of ignored targets).

- total>rest: a reduction of the whole tensor whose result the rest of the reference reads
  elementwise over tensors again (a Frobenius norm dividing its input, a mean subtracted before
  a second reduction). The total structure ends in one program holding one value; reading it
  back over the whole tensor is a second pass. Stage 1 is the whole-tensor reduction and what it
  reads, and writes its one value; stage 2 is everything after, reading that value as one more
  (one-element) input, recomputing what else it reads from the inputs.

The launcher runs the two kernels in order. The value in between makes one round trip through
memory that a fused kernel would avoid.
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
    before = ancestors(mms[0])
    return any(shp.is_reduction(n) and n not in before for n in nodes)


def whole_of_rows(graph: GraphModule) -> list[Node]:
    """The reductions of a whole tensor that is smaller than the largest one reduced (a
    per-row value reduced to a scalar), when rows are reduced too: what row>total splits at."""
    nodes = list(graph.graph.nodes)
    if any(n.op == "call_function" and shp.packet(n) in GEMMS for n in nodes):
        return []
    reductions = [n for n in nodes if shp.is_reduction(n) and isinstance(n.args[0], Node)]
    if not reductions:
        return []
    size = max(_numel(n.args[0]) for n in reductions)
    whole = [
        n
        for n in reductions
        if _numel(n.args[0]) < size and shp.reduced_range(n) == (0, n.args[0].meta["val"].dim())
    ]
    rows = [  # the largest reduced tensor reduced by rows, not as a whole
        n
        for n in reductions
        if _numel(n.args[0]) == size and shp.reduced_range(n) != (0, n.args[0].meta["val"].dim())
    ]
    return whole if whole and rows else []


def whole_read_again(graph: GraphModule) -> Node | None:
    """The first reduction of the whole of a tensor whose result a later op reads over a tensor
    of more than one element (not through another reduction): what total>rest splits at; None
    when there is none, or the trace multiplies matrices."""
    nodes = list(graph.graph.nodes)
    if any(n.op == "call_function" and shp.packet(n) in GEMMS for n in nodes):
        return None
    for cut in nodes:
        if not (shp.is_reduction(cut) and isinstance(cut.args[0], Node)):
            continue
        if shp.reduced_range(cut) != (0, cut.args[0].meta["val"].dim()):
            continue
        if any(_reads_again(n, cut) for n in nodes):
            return cut
    return None


def _reads_again(node: Node, cut: Node) -> bool:
    """`node` reads `cut`'s value (through scalar ops) over more than one element."""
    if node.op != "call_function" or node is cut or shp.is_reduction(node):
        return False
    if not shp.tensor_vals(node) or _numel(node) <= 1:
        return False
    return cut in ancestors(node)


def split_whole(graph: GraphModule, cut: Node, product: str) -> tuple[GraphModule, GraphModule]:
    """(stage 1, stage 2) of a total>rest trace split at the whole-tensor reduction `cut`:
    stage 1 returns its one value; stage 2 takes the inputs and then that value (named
    `product`), recomputes what else it reads from the inputs, and returns what the trace
    returns."""
    nodes = list(graph.graph.nodes)
    out = next(n for n in nodes if n.op == "output")
    needed: set[Node] = set()
    todo = list(out.all_input_nodes)
    while todo:  # what the output reads, the cut's own inputs left to stage 1
        n = todo.pop()
        if n in needed or n is cut:
            continue
        needed.add(n)
        todo += n.all_input_nodes
    return stages(
        graph, cut, product, [n for n in nodes if n in needed and n.op == "call_function"]
    )


def _numel(node: Node) -> int:
    return shp.tensor_vals(node)[0].numel()


def split_rows(graph: GraphModule, product: str) -> tuple[GraphModule, GraphModule]:
    """(stage 1, stage 2) of a row>total trace: stage 1 takes the trace's inputs and returns
    the per-row value the whole-tensor reductions read; stage 2 takes the inputs and then that
    value (named `product`) and returns what the trace returns. NotSupported when more than one
    value computed from the rows crosses, or the trace returns a value of stage 1."""
    nodes = list(graph.graph.nodes)
    whole = set(whole_of_rows(graph))
    later = {n for n in nodes if n.op == "call_function" and ancestors(n) & whole}
    crossing = list(
        dict.fromkeys(
            a
            for n in later
            for a in n.all_input_nodes
            if a not in later and a.op == "call_function"
        )
    )
    from_rows = [
        a
        for a in crossing
        if any(shp.is_reduction(b) for b in ancestors(a) if b is not a) or shp.is_reduction(a)
    ]
    if len(from_rows) != 1:
        named = ", ".join(f"aten.{shp.packet(a)}" for a in from_rows) or "none"
        raise NotSupported(
            f"the reduction to one value reads {len(from_rows)} per-row values computed from "
            f"the rows ({named}); the row>total split carries exactly one"
        )
    cut = from_rows[0]
    out = next(n for n in nodes if n.op == "output")
    if any(a not in later for a in out.all_input_nodes):
        raise NotSupported(
            "the reference returns a per-row or full-size value besides its reduction to one "
            "value; the row>total split returns the reduction only"
        )
    keep = {b for a in crossing if a is not cut for b in ancestors(a) if b.op == "call_function"}
    return stages(graph, cut, product, [n for n in nodes if n in keep or n in later])


def ancestors(node: Node) -> set[Node]:
    """`node` and every node it reads, transitively."""
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
    first = ancestors(mm)
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
    keep = {a for n in shared for a in ancestors(n) if a.op == "call_function"}
    return stages(graph, mm, product, [n for n in nodes if n in keep] + rest)


def stages(
    graph: GraphModule, cut: Node, product: str, second: list[Node]
) -> tuple[GraphModule, GraphModule]:
    """The two stage graphs of a split at `cut`: stage 1 takes the trace's inputs and returns
    `cut` (computed from its ancestors); stage 2 takes the inputs and then `cut`'s value
    (named `product`), recomputes or computes the nodes of `second` in that order, and returns
    what the trace returns."""
    nodes = list(graph.graph.nodes)
    inputs = [n for n in nodes if n.op == "placeholder"]

    one = Graph()
    env: dict[Node, Node] = {}
    for n in inputs:
        _copy(one, n, env)
    first = ancestors(cut)
    for n in nodes:
        if n in first and n.op == "call_function":
            _copy(one, n, env)
    one.output(env[cut])

    two = Graph()
    env = {}
    for n in inputs:
        _copy(two, n, env)
    held = two.placeholder(product)
    held.meta = {"val": cut.meta["val"]}
    env[cut] = held
    for n in second:
        if n not in env:
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
