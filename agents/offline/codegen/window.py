"""Index-map ops: each output element reads input elements at coordinates computed from its own.

`aten.constant_pad_nd`, `aten.avg_pool2d`/`avg_pool3d` and `aten.max_pool2d_with_indices`/
`max_pool3d_with_indices` (values only) are translated in the pointwise structure, over the
output's elements: the flat offset is decoded into the output's coordinates (int64), the
source coordinates follow from the op's constants (pads, kernel, stride, padding, dilation:
literals of the argument class), and the source is read with masked loads, a pool's window
unrolled tap by tap. The sizes (the source's dims, the
output's, the leading dims folded into one) are kernel arguments the launcher computes from its
tensors at run time, so one kernel serves every shape of its class.

The tensor an index-map op reads is a *window source*: a graph input, possibly through dtype
casts that widen it (`x.float()`; the loads convert to fp32 anyway) and, for a pool, unsqueezes
(a 1-D pool is traced as a 2-D pool of the input with a dim of size 1 added, which moves no
element), read by nothing else. It
is not of the problem's shape, so `shapes.node_kinds` skips it (as the gemm's operands); the
launcher makes it contiguous, as it does every input.

PyTorch's rules, followed exactly (and checked against the traced shapes):
- output size per pooled dim: (n + 2p - d(k - 1) - 1 [+ s - 1 with ceil_mode]) // s + 1, less
  one with ceil_mode when the last window would start past n + p;
- an average pool divides the fp32 sum by divisor_override if given; else with
  count_include_pad by the window clipped to the padded map, per pooled dim min(h0 + kh, H +
  ph) - h0, multiplied (kh * kw (* kd) unless ceil_mode lets a window hang past it); else by the
  in-bounds taps;
- a max pool pads with -inf, and a NaN in the window wins (torch's `v > m or isnan(v)`).

A 3-D pool is the 2-D one with one more pooled dim (depth, then height, then width), over
(N, C, D, H, W) or (C, D, H, W) inputs; its window is unrolled the same way.

A window of more than MAX_TAPS taps (an 11x11 average pool) is not unrolled: one statement
calls a @triton.jit helper (`emit`'s `_window_sum`, `_window_max`) that loops over the taps at
run time with the same masks, the average's divisor computed as above.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import torch
from torch.fx import Node

from agents.offline.codegen import emit
from agents.offline.codegen import shapes as shp
from agents.offline.codegen.ops import NotSupported, literal
from agents.offline.codegen.trace import ALONG_ROW, CONVERSIONS, INDEX_MAPS, op_name
from agents.offline.codegen.values import Value, constant_value, is_var, rounded

if TYPE_CHECKING:
    from agents.offline.codegen.builder import Builder

WINDOW_OPS = INDEX_MAPS
MAX_TAPS = 64  # a pool's window is unrolled up to this many taps; larger ones loop

# argument positions and names in the aten schemas
_PAD_ARGS = {"pad": 1, "value": 2}
_POOL_ARGS = {
    "avg_pool2d": {
        "kernel_size": 1,
        "stride": 2,
        "padding": 3,
        "ceil_mode": 4,
        "count_include_pad": 5,
        "divisor_override": 6,
    },
    "max_pool2d_with_indices": {
        "kernel_size": 1,
        "stride": 2,
        "padding": 3,
        "dilation": 4,
        "ceil_mode": 5,
    },
}
_POOL_ARGS["avg_pool3d"] = _POOL_ARGS["avg_pool2d"]  # the same schemas, over three dims
_POOL_ARGS["max_pool3d_with_indices"] = _POOL_ARGS["max_pool2d_with_indices"]
_POOLED = {
    "avg_pool2d": 2,
    "max_pool2d_with_indices": 2,
    "avg_pool3d": 3,
    "max_pool3d_with_indices": 3,
}
_MAX_POOLS = {"max_pool2d_with_indices", "max_pool3d_with_indices"}  # (values, indices)


def pool_out_size(n: int, k: int, s: int, p: int, d: int, ceil: bool) -> int:
    """PyTorch's output size of one pooled dim of size n."""
    c = 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    out = (n + c) // s + 1
    if ceil and (out - 1) * s >= n + p:  # the last window must start inside the map or its pad
        out -= 1
    return out


def _pool_out_text(n: str, k: int, s: int, p: int, d: int, ceil: bool) -> str:
    """`pool_out_size` as launcher text over the dim expression `n`."""
    c = 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    q = _plus(n, c) if s == 1 else f"({_plus(n, c)}) // {s}"
    if s == 1:  # every window then starts inside the map: ceil_mode changes nothing
        return _plus(n, c + 1)
    if not ceil:
        return f"{q} + 1"
    return f"{q} + 1 - int({q} * {s} >= {_plus(n, p)})"


def _plus(text: str, c: int) -> str:
    return text if c == 0 else f"{text} + {c}" if c > 0 else f"{text} - {-c}"


def _times(text: str, s: int) -> str:
    return text if s == 1 else f"{text} * {s}"


def _slices_of(user: Node, pad: Node) -> bool:
    """Whether `user` is a slice of `pad`'s result (read as its own index map)."""
    return user.op == "call_function" and shp.packet(user) == "slice" and user.args[0] is pad


def _spatial(value: Any, k: int, what: str, node: Node) -> tuple[int, ...]:
    """A pooling argument as one int per pooled dim (k of them): an int, or a list of one or k
    ints."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * k
    if (
        isinstance(value, list | tuple)
        and len(value) in (1, k)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return tuple(value) if len(value) == k else (value[0],) * k
    raise NotSupported(f"aten.{op_name(node)} with {what} {value!r}")


class WindowMixin:
    """Builder methods for index-map ops; `windowed` holds the window sources (inputs and their
    casts), `window_params` their kernel parameters, `window_shapes` the launcher's expressions
    for the index-map results' shapes."""

    # -- before the walk: which inputs are window sources
    def find_window_sources(self: Builder) -> set[Node]:
        """The inputs (and casts of them) that index-map ops read; refuses a source computed in
        the kernel or read by anything else."""
        chains: set[Node] = set()
        readers = [n for n in self.nodes if n.op == "call_function" and shp.packet(n) in WINDOW_OPS]
        for op in readers:
            node = op.args[0]
            chain: list[Node] = []
            while isinstance(node, Node) and node.op == "call_function":
                if shp.packet(node) == "unsqueeze" and shp.packet(op) != "constant_pad_nd":
                    chain.append(node)  # a 1-D pool: traced as a 2-D pool of an unsqueezed input
                    node = node.args[0]
                    continue
                if shp.packet(node) not in CONVERSIONS:
                    raise NotSupported(
                        f"aten.{op_name(op)} reads {shp.describe(node)}; index-map ops read an "
                        "input (possibly through dtype casts) only"
                    )
                chain.append(node)
                node = node.args[0]
            if not isinstance(node, Node) or node.op != "placeholder":
                raise NotSupported(f"aten.{op_name(op)} does not read a tensor input")
            self._check_casts(op, node, chain)
            chains |= {node, *chain}
        for node in chains:
            for user in node.users:
                if user not in chains and user not in readers:
                    raise NotSupported(
                        f"{shp.describe(node)} is read through an index-map op and by "
                        f"aten.{op_name(user)}; an input must be read one way only"
                    )
        return chains

    def _check_casts(self: Builder, op: Node, placeholder: Node, chain: list[Node]) -> None:
        """A window source is floating and its casts only widen it (the loads convert to fp32,
        so a cast to fp32/fp64 or to its own dtype changes nothing the kernel holds)."""
        src = self.dtype_of(placeholder)
        if not src.is_floating_point or src not in emit.TL_DTYPES:
            raise NotSupported(f"aten.{op_name(op)} of a {src} input; index-map ops read floats")
        for cast in chain:
            if self.dtype_of(cast) not in (src, torch.float32, torch.float64):
                raise NotSupported(
                    f"aten.{op_name(op)} reads {shp.describe(placeholder)} cast to "
                    f"{self.dtype_of(cast)} (a rounding before the index map)"
                )

    def window_input(self: Builder, node: Node, name: str) -> None:
        """A window source's parameter: passed to the kernel as a pointer, never loaded flat."""
        var = emit.safe_name(name, self.taken | self.vars)
        self.vars.add(var)
        param = emit.Param(name, var, "window", self.dtype_of(node))
        self.prog.inputs.append(param)
        self.window_params[node] = param

    # -- the walk
    def window(self: Builder, node: Node) -> None:
        """An index-map op's result: one value per output element."""
        if self.structure not in ("pointwise", "row") or self.reduced_or_scanned():
            raise NotSupported(
                f"aten.{op_name(node)} in a {self.structure} kernel with reductions, scans or a "
                "matrix multiply; index-map ops are translated over independent elements only "
                "(the pointwise structure, or rows whose columns are independent)"
            )
        name = shp.packet(node)
        if (
            name == "constant_pad_nd"
            and node.users
            and all(_slices_of(u, node) for u in node.users)
        ):
            return  # read only through slices of it: each slice is the index map (`pad_slice`)
        if self.kind(node).name != "full":
            raise NotSupported(f"the result of aten.{op_name(node)} is not the output's shape")
        if name == "constant_pad_nd":
            expr = self._pad(node)
        else:
            expr = self._pool(node, name)
        dtype = self.dtype_of(node)
        value = Value(self.add(rounded(expr, dtype), True, op_name(node)), dtype)
        self.values[node] = [value, None] if name in _MAX_POOLS else value

    def reduced_or_scanned(self: Builder) -> bool:
        """Whether the graph reduces, scans or works along rows (an index map's element then
        is not independent of the others in a row program)."""
        return any(shp.is_reduction(n) or shp.packet(n) in ALONG_ROW for n in self.nodes)

    def _view(self: Builder, node: Node) -> tuple[emit.Param, list[tuple[int, ...]], list[str]]:
        """The window source's parameter, the shape the index-map op reads in every trace (the
        source's own, or with the dims of size 1 that unsqueezes add) and the launcher's text
        for each of its dims. An unsqueeze of a contiguous tensor keeps every element's offset."""
        views: list[int] = []
        src = node.args[0]
        while src not in self.window_params:
            if shp.packet(src) == "unsqueeze":
                views.append(src.args[1])
            src = src.args[0]
        param = self.window_params[src]
        ndim = len(self.per_graph[0][self.index[src]].meta["val"].shape)
        dims = [f"{param.name}.shape[{i}]" for i in range(ndim)]
        for d in reversed(views):  # the unsqueeze nearest the input first
            dims.insert(d % (len(dims) + 1), "1")
        read = node.args[0]
        shapes = [tuple(nodes[self.index[read]].meta["val"].shape) for nodes in self.per_graph]
        return param, shapes, dims

    def _arg(self: Builder, node: Node, name: str, table: dict[str, int], default: Any) -> Any:
        """A constant argument, given by position or by keyword (the same in every trace)."""
        at = table[name]
        if at < len(node.args):
            return self.lit(node, at)
        return self.lit(node, name, default)

    def size_arg(self: Builder, stem: str, expr: str) -> str:
        """A kernel argument the launcher computes as `expr` (one per expression)."""
        for sym, have in self.prog.symbols.items():
            if have == expr:
                return sym
        sym = emit.safe_name(
            stem, self.taken | self.vars | set(self.prog.symbols) | set(self.params)
        )
        self.taken.add(sym)
        self.prog.symbols[sym] = expr
        return sym

    def divided_by(self: Builder, sym: str) -> str:
        """`sym`, a size argument the kernel divides by (`//`, `%`): a constexpr from here on
        (`emit.Program.static`)."""
        self.prog.static.add(sym)
        return sym

    def let_tile(self: Builder, expr: str, note: str) -> str:
        """A tile statement, shared by the index maps that compute the same expression."""
        if expr not in self.window_exprs:
            self.window_exprs[expr] = self.add(expr, True, note)
        return self.window_exprs[expr]

    def _decode(self: Builder, sizes: list[str], note: str) -> tuple[list[str], str]:
        """The output element's coordinates over its last len(sizes) dims (`sizes`: their
        kernel arguments, last dim first) and the index of the leading dims folded into one."""
        coords, rest = [], self._flat_offset(note)
        for size in map(self.divided_by, sizes):
            coords.append(self.let_tile(f"{rest} % {size}", note))
            rest = self.let_tile(f"{rest} // {size}", note)
        return coords, rest

    def _result_shape(self: Builder, node: Node, want: list[tuple[int, ...]], expr: str) -> None:
        """Check the index map's result shapes (`want`, per trace, by PyTorch's rules as
        implemented here) against the traces, and record the launcher's `expr` for them."""
        got = [tuple(shp.tensor_vals(nodes[self.index[node]])[0].shape) for nodes in self.per_graph]
        if got != want:
            raise NotSupported(
                f"aten.{op_name(node)} returns shapes {got}, not {want} as the generator computes "
                "them; its index map would be wrong"
            )
        self.window_shapes.append((want, expr))

    def pad_slice(self: Builder, node: Node) -> None:
        """A slice (step 1, a start the same in every trace) of a pad's result along one dim, of
        the output's shape: the pad's index map shifted by the start (`xp[..., k:k + L]` of
        `xp = pad(x, (3, 0))` reads x at c + k - 3), the padded tensor never made."""
        if self.kind(node).name != "full":
            raise NotSupported(f"the slice aten.{op_name(node)} of a pad is not the output's shape")
        pad = node.args[0]
        ndim = len(self.per_graph[0][self.index[pad]].meta["val"].shape)
        dim = self.lit(node, 1, 0) % ndim
        start = self.lit(node, 2, 0) or 0
        if self.lit(node, 4, 1) != 1 or not isinstance(start, int) or start < 0:
            raise NotSupported(f"aten.{op_name(node)} of a pad with a step or a negative start")
        lengths = [int(nodes[self.index[node]].meta["val"].shape[dim]) for nodes in self.per_graph]
        cut = (ndim - 1 - dim, start, self.make_sizes().dim(lengths))
        dtype = self.dtype_of(node)
        expr = self._pad(pad, cut=cut, result=node)
        self.values[node] = Value(self.add(rounded(expr, dtype), True, op_name(node)), dtype)

    # -- constant_pad_nd
    def _pad(
        self: Builder,
        node: Node,
        cut: tuple[int, int, str] | None = None,
        result: Node | None = None,
    ) -> str:
        """out[..., c] = x[..., c - before] inside, the fill value outside (a masked load).
        `cut` (a slice of the result, `pad_slice`): (its dim counted from the last, its start,
        the launcher's text for its length); `result` the node whose shape is the output."""
        pads = self._arg(node, "pad", _PAD_ARGS, [])
        param, shapes, _ = self._view(node)
        ndim = len(shapes[0])
        k = len(pads) // 2 if isinstance(pads, list | tuple) else 0
        if not 1 <= k <= ndim or len(pads) % 2:
            raise NotSupported(f"aten.{op_name(node)} with pads {pads!r} on a {ndim}-D input")
        pairs = [(pads[2 * j], pads[2 * j + 1]) for j in range(k)]  # last dim first
        note = op_name(node)
        dims = [f"{param.name}.shape[{ndim - 1 - j}]" for j in range(k)]  # last dim first
        outs = [_plus(d, sum(pairs[j])) for j, d in enumerate(dims)]
        want = [
            s[: ndim - k] + tuple(s[ndim - 1 - j] + sum(pairs[j]) for j in reversed(range(k)))
            for s in shapes
        ]
        if cut is not None:  # a slice of the padded dim: it starts `start` into the padding
            j, start, length = cut
            if j >= k:
                raise NotSupported(f"a slice of aten.{note} along a dim it does not pad")
            pairs[j] = (pairs[j][0] - start, pairs[j][1])
            outs[j] = length
            got = [tuple(nodes[self.index[result]].meta["val"].shape) for nodes in self.per_graph]
            want = [
                w[: ndim - 1 - j] + (g[ndim - 1 - j],) + w[ndim - j :]
                for w, g in zip(want, got, strict=True)
            ]
        kept = f"*{param.name}.shape[:{ndim - k}], " if ndim > k else ""  # the dims not padded
        self._result_shape(
            result if result is not None else node,
            want,
            f"({kept}{', '.join(reversed(outs))}{',' if ndim == 1 else ''})",
        )
        in_sizes = [self.size_arg(f"{param.var}_d{ndim - 1 - j}", d) for j, d in enumerate(dims)]
        out_sizes = [self.size_arg(f"pad_d{ndim - 1 - j}", o) for j, o in enumerate(outs)]
        coords, lead = self._decode(out_sizes, note)
        valid, offset, stride = ["mask"], [], []
        for j, (before, after) in enumerate(pairs):
            at = self.let_tile(f"{coords[j]} - {literal(before)}", note) if before else coords[j]
            if before or after:
                valid.append(f"({at} >= 0) & ({at} < {in_sizes[j]})")
            offset.append(f"{at} * {' * '.join(stride)}" if stride else at)
            stride.append(in_sizes[j])
        offset.append(f"{lead} * {' * '.join(stride)}")
        fill = self._fill(node)
        where = self.let_tile(" & ".join(valid), note)
        return (
            f"tl.load({param.name}_ptr + {' + '.join(reversed(offset))}, mask={where}, "
            f"other={fill}).to(tl.float32)"
        )

    def _fill(self: Builder, node: Node) -> str:
        """The pad's fill value: a float literal, or the kernel argument of a float parameter."""
        at = _PAD_ARGS["value"]
        fill = self.num(node, at if at < len(node.args) else "value", 0.0)
        return fill if is_var(fill) else literal(constant_value(fill))

    # -- pooling
    def _pool(self: Builder, node: Node, name: str) -> str:
        """A 2-D or 3-D pool (a 1-D one arrives as 2-D): the window's taps unrolled, dim by
        dim, each tap's offset and in-bounds test built from the outer dims' inward."""
        table = _POOL_ARGS[name]
        k = _POOLED[name]
        ks = _spatial(self._arg(node, "kernel_size", table, None), k, "kernel_size", node)
        stride = self._arg(node, "stride", table, [])
        ss = ks if stride in ([], (), None) else _spatial(stride, k, "stride", node)
        ps = _spatial(self._arg(node, "padding", table, 0), k, "padding", node)
        dilation = self._arg(node, "dilation", table, 1) if "dilation" in table else 1
        ds = _spatial(dilation, k, "dilation", node)
        ceil = bool(self._arg(node, "ceil_mode", table, False))
        param, shapes, dims = self._view(node)
        ndim = len(shapes[0])
        if ndim not in (k + 1, k + 2) or len(dims) != ndim:
            raise NotSupported(f"aten.{op_name(node)} of a {ndim}-D input")
        args = [(kk, s, p, d, ceil) for kk, s, p, d in zip(ks, ss, ps, ds, strict=True)]
        note = op_name(node)
        ins = dims[-k:]
        outs = [_pool_out_text(n, *a) for n, a in zip(ins, args, strict=True)]
        self._result_shape(
            node,
            [
                s[:-k] + tuple(pool_out_size(n, *a) for n, a in zip(s[-k:], args, strict=True))
                for s in shapes
            ],
            f"({', '.join([*dims[:-k], *outs])})",
        )
        added = [i for i, d in enumerate(dims) if d == "1"]  # dims an unsqueeze added
        if added:  # the result squeezed back (a 1-D pool's output): its shape too
            want, expr = self.window_shapes[-1][0], [*dims[:-k], *outs]
            keep = [i for i in range(ndim) if i not in added]
            self.window_shapes.append(
                (
                    [tuple(s[i] for i in keep) for s in want],
                    f"({', '.join(expr[i] for i in keep)}{',' if len(keep) == 1 else ''})",
                )
            )
        axes = "dhw"[-k:]
        sizes = [self.size_arg(f"{param.var}_{a}", n) for a, n in zip(axes, ins, strict=True)]
        pooled = [self.size_arg(f"pool_{a}", o) for a, o in zip(axes, outs, strict=True)]
        coords, lead = self._decode(pooled[::-1], note)
        coords = coords[::-1]  # outermost pooled dim first
        base = self.let_tile(f"{lead} * ({' * '.join(sizes)})", note)
        starts = [
            self.let_tile(_plus(_times(o, a[1]), -a[2]), note)
            for o, a in zip(coords, args, strict=True)
        ]
        if math.prod(ks) > MAX_TAPS:  # too many taps to unroll: a loop over the window
            return self._looped(node, name, param, (base, starts, sizes), (ks, ds), (table, ps))
        # the taps of the dims before the last: (offset, in bounds), outermost first
        taps = [(base, "mask")]
        for j in range(k - 1):
            inner = " * ".join(sizes[j + 1 :])
            rows = []
            for off, ok in taps:
                for i in range(ks[j]):
                    at = self.let_tile(_plus(starts[j], i * ds[j]), note) if i else starts[j]
                    inside = self.let_tile(f"{ok} & ({at} >= 0) & ({at} < {sizes[j]})", note)
                    rows.append((self.let_tile(f"{off} + {at} * {inner}", note), inside))
            taps = rows
        cols = []
        for i in range(ks[-1]):
            at = self.let_tile(_plus(starts[-1], i * ds[-1]), note) if i else starts[-1]
            cols.append((at, self.let_tile(f"({at} >= 0) & ({at} < {sizes[-1]})", note)))
        window = [(r, rok, c, cok) for r, rok in taps for c, cok in cols]
        if name in _MAX_POOLS:
            return self._max_taps(param, window, note)
        total = None
        for r, rok, c, cok in window:
            load = f"tl.load({param.name}_ptr + {r} + {c}, mask={rok} & {cok}, other=0.0)"
            load += ".to(tl.float32)"
            total = self.add(load if total is None else f"{total} + {load}", True, note)
        return f"{total} / {self._divisor(node, table, ks, ps, ceil, starts, sizes)}"

    def _looped(
        self: Builder,
        node: Node,
        name: str,
        param: emit.Param,
        at: tuple[str, list[str], list[str]],
        window: tuple[tuple[int, ...], tuple[int, ...]],
        avg: tuple[dict[str, int], tuple[int, ...]],
    ) -> str:
        """A window of more than MAX_TAPS taps, summed or maxed by a loop at run time
        (`emit`'s `_window_sum`/`_window_max` helpers); `at`: the map's offset, the window's
        start and the map's size per pooled dim; `window`: kernel size and dilation per pooled
        dim; `avg`: the schema table and padding, for an average pool's divisor."""
        base, starts, sizes = at
        ks, ds = window
        if len(ks) == 2:  # a 2-D pool: one plane of depth one (d0 a tile of zeros, as h0)
            starts = [f"{starts[0]} * 0", *starts]
            sizes, ks, ds = ["1", *sizes], (1, *ks), (1, *ds)
        how = "max" if name in _MAX_POOLS else "sum"
        self.prog.helpers.add(f"_window_{how}")
        note = op_name(node)
        args = [f"{param.name}_ptr", base, *starts, *sizes, "mask", *map(str, ks), *map(str, ds)]
        value = self.add(f"_window_{how}({', '.join(args)})", True, note)
        if how == "max":
            return value
        table, ps = avg
        ceil = bool(self._arg(node, "ceil_mode", table, False))
        divisor = self._divisor(node, table, window[0], ps, ceil, at[1], at[2])
        return f"{value} / {divisor}"

    def _max_taps(self: Builder, param: emit.Param, taps: list[tuple[str, ...]], note: str) -> str:
        """The window's max: -inf outside the map, a NaN wins (as torch's `v > m or isnan(v)`)."""
        best = None
        for r, rok, c, cok in taps:
            load = (
                f"tl.load({param.name}_ptr + {r} + {c}, mask={rok} & {cok}, "
                'other=float("-inf")).to(tl.float32)'
            )
            tap = self.add(load, True, note)
            best = (
                tap
                if best is None
                else self.add(
                    f"tl.where(({tap} > {best}) | ({tap} != {tap}), {tap}, {best})", True, note
                )
            )
        assert best is not None
        return best

    def _divisor(
        self: Builder,
        node: Node,
        table: dict[str, int],
        k: tuple[int, ...],
        p: tuple[int, ...],
        ceil: bool,
        start: list[str],
        size: list[str],
    ) -> str:
        """An average pool's divisor, as PyTorch computes it (see the module docstring)."""
        override = self._arg(node, "divisor_override", table, None)
        if override is not None:
            if not isinstance(override, int) or override == 0:
                raise NotSupported(f"aten.{op_name(node)} with divisor_override {override!r}")
            return literal(float(override))
        include = bool(self._arg(node, "count_include_pad", table, True))
        if include and not ceil:  # every window lies inside the padded map
            return literal(float(math.prod(k)))
        spans = []
        for s, kk, pp, n in zip(start, k, p, size, strict=True):
            if include:
                spans.append(f"(tl.minimum({s} + {kk}, {n} + {pp}) - {s})")
            else:
                spans.append(f"(tl.minimum({s} + {kk}, {n}) - tl.maximum({s}, 0))")
        count = self.add(f"({' * '.join(spans)}).to(tl.float32)", True, op_name(node))
        return count

    def window_shape(self: Builder, shapes: list[tuple[int, ...]]) -> str | None:
        """The launcher's expression for an output of an index-map result's shape, if it is."""
        for want, expr in self.window_shapes:
            if want == shapes:
                return expr
        return None
