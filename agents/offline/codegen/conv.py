"""The convolution family: references whose graph is `aten.convolution` (F.conv1d/2d/3d,
F.conv_transpose1d/2d/3d, nn.ConvNd and nn.ConvTransposeNd modules), one or a chain of them,
translated into one direct Triton kernel launched once per convolution.

What the kernel computes. Every convolution is written as a 3-D one: a 1-D input (N, C, L) is
read as (N, C, 1, 1, L), a 2-D one (N, C, H, W) as (N, C, 1, H, W), the missing dims having kernel
size 1, stride 1, padding 0 and dilation 1. With G groups, CG = C_in / G input channels and
OG = C_out / G output channels per group, output element (b, co, od, oh, ow) of group
g = co // OG is

    out[b, co, o] = bias[co] + sum over ci < CG and taps k = (kd, kh, kw) of x[b, g*CG + ci, i] * w[.]

where, per spatial dim (stride s, padding p, dilation d):
- forward: i = o*s - p + k*d, a tap outside [0, I) reading 0 (the padding); the weight is
  w[co, ci, kd, kh, kw] (shape (C_out, CG, KD, KH, KW));
- transposed (the gather form of conv_transpose: each output element sums the input elements
  that scatter onto it): input i contributes to output i*s - p + k*d, so for an output o and tap k
  the input is i = (o + p - k*d) / s, counted only when that division is exact and i lies in
  [0, I); the weight is w[g*CG + ci, co % OG, kd, kh, kw] (shape (C_in, OG, KD, KH, KW)).
Output sizes, computed by the launcher: forward O = (I + 2p - d*(K-1) - 1) // s + 1; transposed
O = (I - 1)*s - 2p + d*(K-1) + output_padding + 1.

How it is tiled. The output is flattened (int64 offsets); each program takes BLOCK (the
launcher's BLOCK_O) consecutive output elements and decodes each offset into (b, co, od, oh, ow).
The reduction index r = ((ci*KD + kd)*KH + kh)*KW + kw runs over R = CG*KD*KH*KW values, walked
in chunks of BLOCK_R: a (BLOCK, BLOCK_R) tile of input values (masked loads: padding, bounds,
inexact transposed taps read 0) times the matching weights, summed along the chunk into an fp32
accumulator (for the forward weight the tile's offset is simply co*R + r). The bias is added in fp32 and the
result rounded once to the output dtype. Stride, padding, dilation and the transposed flag are
tl.constexpr (literals of the reference, the same in every trace); channel counts, spatial and
kernel sizes are run-time ints the launcher reads off the tensors.

A chain (conv after conv, e.g. depthwise then pointwise) launches the kernel once per
convolution, each writing a new tensor that the next reads. Ops after the last convolution (an
epilogue: ReLU, a scale, a full-size residual) are a second stage that the pointwise or row
structure builds (split as `agents.offline.codegen.stages` splits a GEMM from its reduction),
reading the convolution's result from memory; what those structures cannot hold is refused
there (a per-channel (C, 1, 1) bias, for one). Ops before or between convolutions (a prologue,
a view) are refused.

Tunables: BLOCK_O (output elements per program: the kernel's BLOCK), BLOCK_R (the reduction
chunk, capped at next_power_of_2(R)) and CONV_WARPS (the kernel's num_warps; its own name,
so that an epilogue stage's num_warps is tuned apart). The stride, padding and dilation must be the
same in every trace of a class (a problem whose shrunk CPU size changes its stride is refused);
groups may change with the shape where the tensors tell it (see `_groups`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from torch.fx import GraphModule, Node

from agents.offline.codegen import emit
from agents.offline.codegen import stages as stg
from agents.offline.codegen.builder import Builder
from agents.offline.codegen.ops import NotSupported
from agents.offline.codegen.trace import check_ops_known, check_same_ops, op_name, op_sequence

# 256 x 64 tiles: on the CPU interpreter the cost is per tile op, so large tiles (KernelBench
# 78 at its CPU size: 128 x 32 23.6 s, 128 x 64 13.5 s, 256 x 64 7.4 s, 2026-12-03); 8 warps keep
# a GPU tile at 64 values per thread. Not measured on a GPU.
CONV_DEFAULTS = {"BLOCK_O": 256, "BLOCK_R": 64, "CONV_WARPS": 8}
CONV_TUNABLES = {"BLOCK_O": [64, 128, 256, 512], "BLOCK_R": [16, 32, 64], "CONV_WARPS": [2, 4, 8]}
CONV_DOC = (
    "Structure: conv (direct convolution). Each program computes BLOCK_O output elements of the\n"
    "flattened output; the reduction over input channels of the group and kernel taps is walked\n"
    "in BLOCK_R chunks of (BLOCK, BLOCK_R) masked loads, accumulated in fp32; one rounding on\n"
    "store. A chain of convolutions launches the kernel once per convolution."
)


@dataclass(frozen=True)
class Conv:
    """One aten.convolution: its operands (launcher names; bias "" when absent) and literals,
    each spatial argument padded to 3 dims (depth, height, width)."""

    x: str  # a launcher input, or "" when the input is convolution `source`'s result
    w: str
    bias: str
    dims: int  # spatial dims: 1, 2 or 3
    stride: tuple[int, int, int]
    padding: tuple[int, int, int]
    dilation: tuple[int, int, int]
    transposed: bool
    output_padding: tuple[int, int, int]
    groups: int  # 0: read off the tensors at run time (see `_groups`)
    source: int = -1  # the index of the convolution whose result is the input (-1: an input)


@dataclass
class ConvProgram(emit.Program):
    """A conv program: the convolutions in order (each reads a launcher input or the one
    before it; the last one's result is returned)."""

    convs: list[Conv] = field(default_factory=list)


def has_conv(graph: GraphModule) -> bool:
    """Whether the graph runs a convolution (then this family translates it or refuses)."""
    return any(n.op == "call_function" and _is_conv(n) for n in graph.graph.nodes)


def _three(value: object, dims: int, what: str, fill: int) -> tuple[int, int, int]:
    if not (isinstance(value, list | tuple) and all(type(v) is int for v in value)):
        raise NotSupported(f"aten.convolution with {what} {value!r}: expected a list of ints")
    items = list(value)
    if len(items) == 1 and dims > 1:
        items = items * dims
    if len(items) != dims:
        raise NotSupported(f"aten.convolution with {what} {value!r} for a {dims}-D convolution")
    a, b, c = [fill] * (3 - dims) + items
    return a, b, c


def _literals(node: Node) -> tuple[object, ...]:
    """Stride, padding, dilation, transposed and output_padding: one kernel's constexprs."""
    return tuple(node.args[3:8])


def epilogue_split(graph: GraphModule, product: str) -> tuple[GraphModule, GraphModule] | None:
    """None when the graph is convolutions alone; else (stage 1, stage 2) split after its last
    convolution: stage 1 the convolutions (returning the last one's result), stage 2 the ops
    after it, reading that result as one more input named `product` (the pointwise or row
    structure builds it). NotSupported when ops after the split read stage 1's values other
    than the last convolution's result, or ops run before or between the convolutions."""
    nodes = list(graph.graph.nodes)
    convs = [n for n in nodes if n.op == "call_function" and _is_conv(n)]
    cut = convs[-1]
    first = stg.ancestors(cut)
    rest = [n for n in nodes if n.op == "call_function" and n not in first]
    for n in first:
        if n.op == "call_function" and not _is_conv(n):
            raise NotSupported(
                f"aten.{op_name(n)} before a convolution: the conv family reads its inputs as "
                "they are (no prologue ops)"
            )
        if n is not cut and n.op == "call_function" and any(u not in first for u in n.users):
            raise NotSupported("ops after the last convolution read an earlier one's result")
    if not rest:
        return None
    for n in rest:
        if _is_conv(n):
            raise NotSupported("a convolution of a value computed by other ops than convolutions")
    return stg.stages(graph, cut, product, rest)


def _is_conv(node: Node) -> bool:
    return op_name(node).split(".")[0] == "convolution"


def _groups(node: Node, others: list[list[Node]], i: int) -> int:
    """The groups of convolution `node` (node i of every graph): a literal where every trace has
    the same; 0 where it changes with the shape, read off the tensors at run time (a forward
    convolution: C_in // weight.shape[1]; a transposed one whose groups is C_in in every trace,
    depthwise: C_in)."""
    groups = [node.args[8], *(other[i].args[8] for other in others)]
    if any(type(g) is not int or g < 1 for g in groups):
        raise NotSupported(f"aten.convolution with groups {groups[0]!r}")
    if len(set(groups)) == 1:
        return groups[0]
    if node.args[6] and any(
        g != n.args[0].meta["val"].shape[1]
        for g, n in zip(groups, [node, *(o[i] for o in others)], strict=True)
    ):
        raise NotSupported(
            "a transposed aten.convolution whose groups change between traced shapes other than "
            "as its input channels"
        )
    return 0


def programs(
    graphs: list[GraphModule], inputs: list[str], names: list[str], scalars: dict[str, list[float]]
) -> list[emit.Program]:
    """The programs of an argument class whose graphs run convolutions: the conv program, and
    where ops follow the last convolution a second stage of them (`Builder`: pointwise or row)
    over its result. `inputs`: the launcher names of the graphs' inputs; `names`: the launcher's
    parameters; `scalars`: float parameters taken at run time."""
    product = emit.launcher_safe("conv_out")
    while product in names:
        product += "_"
    pairs = [epilogue_split(g, product) for g in graphs]
    if not all(pairs):
        return [build(graphs, check_same_ops(graphs), inputs, names)]
    firsts = [p[0] for p in pairs if p]
    seconds = [p[1] for p in pairs if p]
    for seq in dict.fromkeys(tuple(op_sequence(g)) for g in seconds):
        check_ops_known(list(seq))
    rest = Builder(
        seconds, check_same_ops(seconds), [*inputs, product], [*names, product], "", scalars
    )
    return [build(firsts, check_same_ops(firsts), inputs, names), rest.build()]


def build(
    graphs: list[GraphModule], ops: list[str], inputs: list[str], params: list[str]
) -> ConvProgram:
    """The conv program of one argument class: `inputs` are the launcher names of the graphs'
    placeholders, in order; `params` the launcher's parameters. Raises NotSupported."""
    nodes = list(graphs[0].graph.nodes)
    placeholders = [n for n in nodes if n.op == "placeholder"]
    names: dict[Node, str] = dict(zip(placeholders, inputs, strict=True))
    done: dict[Node, int] = {}
    convs: list[Conv] = []
    others = [list(g.graph.nodes) for g in graphs[1:]]
    last: Node | None = None
    for i, node in enumerate(nodes):
        if node.op in ("placeholder", "output"):
            continue
        if node.op != "call_function" or not _is_conv(node):
            raise NotSupported(
                f"aten.{op_name(node)} next to a convolution: the conv family translates "
                "convolutions alone (one, or a chain of them), no prologue or epilogue ops"
            )
        for other in others:
            if _literals(other[i]) != _literals(node):
                raise NotSupported(
                    "aten.convolution's stride, padding, dilation or output_padding change "
                    f"between traced shapes ({_literals(node)} vs {_literals(other[i])})"
                )
        done[node] = len(convs)
        convs.append(_conv(node, names, done, _groups(node, others, i)))
        last = node
    out = next(n for n in nodes if n.op == "output").args[0]
    tuple_output = isinstance(out, list | tuple)
    if tuple_output:
        if len(out) != 1:
            raise NotSupported("the reference returns several tensors next to a convolution")
        out = out[0]
    if last is None or out is not last:
        raise NotSupported("the reference does not return its last convolution's result")
    used = [n for n in nodes if n.op == "call_function"]
    if any(len(n.users) != 1 for n in used[:-1]):
        raise NotSupported("a convolution's result is read twice (the conv family runs a chain)")
    return ConvProgram(
        entry_point="",
        structure="conv",
        params=params,
        primary=convs[0].x,
        inputs=[],
        stmts=[],
        outputs=[],
        ops=ops,
        tuple_output=tuple_output,
        convs=convs,
    )


def _conv(node: Node, names: dict[Node, str], done: dict[Node, int], groups: int) -> Conv:
    x, w, b, stride, padding, dilation, transposed, output_padding, _ = node.args
    for what, arg in (("input", x), ("weight", w)):
        if not isinstance(arg, Node) or not (arg in names or (what == "input" and arg in done)):
            by = f"aten.{op_name(arg)}" if isinstance(arg, Node) else repr(arg)
            raise NotSupported(f"aten.convolution's {what} is computed ({by}), not an input")
    if b is not None and (not isinstance(b, Node) or b not in names or b.op != "placeholder"):
        raise NotSupported("aten.convolution's bias is computed, not an input")
    val, wval = x.meta["val"], w.meta["val"]
    dims = val.dim() - 2
    if dims not in (1, 2, 3) or wval.dim() != dims + 2:
        raise NotSupported(
            f"aten.convolution of a {val.dim()}-D input: the conv family takes batched 1-D, 2-D "
            "and 3-D inputs (N, C, ...)"
        )
    if not (val.dtype.is_floating_point and wval.dtype == val.dtype):
        raise NotSupported(f"aten.convolution of {val.dtype} input and {wval.dtype} weight")
    return Conv(
        x=names.get(x, ""),
        w=names[w],
        bias=names[b] if b is not None else "",
        dims=dims,
        stride=_three(stride, dims, "stride", 1),
        padding=_three(padding, dims, "padding", 0),
        dilation=_three(dilation, dims, "dilation", 1),
        transposed=bool(transposed),
        output_padding=_three(output_padding, dims, "output_padding", 0),
        groups=groups,
        source=done.get(x, -1),
    )


# -- emitted source ------------------------------------------------------------------------------

_KERNEL = '''
@triton.jit
def {name}(
    x_ptr, w_ptr, b_ptr, out_ptr, n,
    C_in, ID, IH, IW, C_out, OD, OH, OW, KD, KH, KW, CG, OG,
    SD: tl.constexpr, SH: tl.constexpr, SW: tl.constexpr,
    PD: tl.constexpr, PH: tl.constexpr, PW: tl.constexpr,
    DD: tl.constexpr, DH: tl.constexpr, DW: tl.constexpr,
    TRANSPOSED: tl.constexpr, HAS_BIAS: tl.constexpr,
    BLOCK: tl.constexpr, BLOCK_R: tl.constexpr,
):
    """BLOCK output elements of a (transposed) convolution, as 3-D (see the module docstring)."""
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ow = offs % OW
    t = offs // OW
    oh = t % OH
    t = t // OH
    od = t % OD
    t = t // OD
    co = t % C_out
    b = t // C_out
    g = co // OG
    K = KD * KH * KW
    R = CG * K
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        r = r0 + tl.arange(0, BLOCK_R)
        rmask = r < R
        kw = r % KW
        u = r // KW
        kh = u % KH
        u = u // KH
        kd = u % KD
        ci = u // KD
        ok = mask[:, None] & rmask[None, :]
        if TRANSPOSED:
            nd = od[:, None] + PD - kd[None, :] * DD
            nh = oh[:, None] + PH - kh[None, :] * DH
            nw = ow[:, None] + PW - kw[None, :] * DW
            ok = ok & (nd >= 0) & (nh >= 0) & (nw >= 0)
            nd = tl.where(ok, nd, 0)
            nh = tl.where(ok, nh, 0)
            nw = tl.where(ok, nw, 0)
            ok = ok & (nd % SD == 0) & (nh % SH == 0) & (nw % SW == 0)
            i_d = nd // SD
            i_h = nh // SH
            i_w = nw // SW
            ok = ok & (i_d < ID) & (i_h < IH) & (i_w < IW)
            w_offs = ((g[:, None] * CG + ci[None, :]) * OG + (co % OG)[:, None]) * K + (r % K)[None, :]
        else:
            i_d = od[:, None] * SD - PD + kd[None, :] * DD
            i_h = oh[:, None] * SH - PH + kh[None, :] * DH
            i_w = ow[:, None] * SW - PW + kw[None, :] * DW
            ok = ok & (i_d >= 0) & (i_d < ID) & (i_h >= 0) & (i_h < IH) & (i_w >= 0) & (i_w < IW)
            w_offs = co[:, None] * R + r[None, :]
        x_offs = (((b[:, None] * C_in + g[:, None] * CG + ci[None, :]) * ID + i_d) * IH + i_h) * IW + i_w
        xv = tl.load(x_ptr + x_offs, mask=ok, other=0.0).to(tl.float32)
        wv = tl.load(w_ptr + w_offs, mask=mask[:, None] & rmask[None, :], other=0.0).to(tl.float32)
        acc += tl.sum(xv * wv, axis=1)
    if HAS_BIAS:
        acc += tl.load(b_ptr + co, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, acc.to(out_ptr.dtype.element_ty), mask=mask)
'''

_RUNNER = '''
def {name}(x, w, bias, stride, padding, dilation, transposed, output_padding, groups, BLOCK_O, BLOCK_R, CONV_WARPS):
    """One convolution: the output's shape, then the kernel over its flattened elements. The
    spatial arguments are 3-D (depth, height, width); a 1-D or 2-D input is viewed as 3-D."""
    dims = x.dim() - 2
    x = x.contiguous()
    w = w.contiguous()
    size = [1] * (3 - dims) + list(x.shape[2:])
    ksize = [1] * (3 - dims) + list(w.shape[2:])
    C_in = x.shape[1]
    if groups == 0:  # it changes with the shape: C_in // CG forward, C_in transposed (depthwise)
        groups = C_in if transposed else C_in // w.shape[1]
    if transposed:
        CG = C_in // groups
        OG = w.shape[1]
        C_out = OG * groups
        osize = [
            (size[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (ksize[i] - 1) + output_padding[i] + 1
            for i in range(3)
        ]
    else:
        CG = w.shape[1]
        C_out = w.shape[0]
        OG = C_out // groups
        osize = [
            (size[i] + 2 * padding[i] - dilation[i] * (ksize[i] - 1) - 1) // stride[i] + 1
            for i in range(3)
        ]
    out = torch.empty([x.shape[0], C_out] + osize[3 - dims:], dtype=x.dtype, device=x.device)
    n = out.numel()
    if n == 0:
        return out
    R = CG * ksize[0] * ksize[1] * ksize[2]
    block_r = max(1, min(BLOCK_R, triton.next_power_of_2(R)))
    has_bias = bias is not None
    if has_bias:
        bias = bias.contiguous()
    grid = (triton.cdiv(n, BLOCK_O),)
    {kernel}[grid](
        x, w, bias if has_bias else w, out, n,
        C_in, size[0], size[1], size[2], C_out, osize[0], osize[1], osize[2],
        ksize[0], ksize[1], ksize[2], CG, OG,
        SD=stride[0], SH=stride[1], SW=stride[2],
        PD=padding[0], PH=padding[1], PW=padding[2],
        DD=dilation[0], DH=dilation[1], DW=dilation[2],
        TRANSPOSED=transposed, HAS_BIAS=has_bias,
        BLOCK=BLOCK_O, BLOCK_R=block_r, num_warps=CONV_WARPS,
    )
    return out
'''


def kernels(prog: emit.Program, stem: str) -> tuple[list[str], str, dict[str, list[int]], str]:
    """The kernel, its runner (a module-level function that sizes the output and launches it)
    and the program's launcher; the tunables and the structure's docstring paragraph."""
    assert isinstance(prog, ConvProgram)
    kernel, runner = f"{stem}_conv_kernel", f"{stem}_conv"
    sources = [
        _KERNEL.format(name=kernel).lstrip("\n"),
        _RUNNER.format(name=runner, kernel=kernel).lstrip("\n"),
    ]
    return sources, _launcher(prog, runner), CONV_TUNABLES, CONV_DOC


def _launcher(prog: ConvProgram, runner: str) -> str:
    params = [f"{p}={prog.defaults[p]}" if p in prog.defaults else p for p in prog.params]
    params += [f"{k}: int = {v}" for k, v in CONV_DEFAULTS.items()]
    taken = set(prog.params)
    temps: list[str] = []
    body: list[str] = []
    for k, c in enumerate(prog.convs):
        temp = f"_conv{k + 1}"
        while temp in taken:
            temp += "_"
        temps.append(temp)
        x = temps[c.source] if c.source >= 0 else c.x
        args = [
            x,
            c.w,
            c.bias or "None",
            str(c.stride),
            str(c.padding),
            str(c.dilation),
            str(c.transposed),
            str(c.output_padding),
            str(c.groups),
            "BLOCK_O",
            "BLOCK_R",
            "CONV_WARPS",
        ]
        body.append(f"{temp} = {runner}({', '.join(args)})")
    result = temps[-1]
    body.append(f"return ({result},)" if prog.tuple_output else f"return {result}")
    head = f"def {prog.entry_point}({', '.join(params)}):\n"
    doc = '    """The convolutions of the reference, in order, each one kernel launch."""\n'
    return head + doc + "".join(f"    {line}\n" for line in body)
