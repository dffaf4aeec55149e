"""Writing a generated kernel: from the small program `agents.offline.codegen.translate` builds to Python source.

The program is straight-line code over named values (`Stmt`), each either a *tile* (a vector of
BLOCK elements: the output's elements, or a per-column vector) or one value per program (a
per-row value, a scalar, a reduction's result). The kernels written from it:

- pointwise: flat over the output's elements; each program handles BLOCK of them, the last
  block masked, int64 offsets.
- row, one pass: one program per row, the whole row in one tile of BLOCK_N = next_power_of_2(N)
  columns; reductions run over the tile with the identity in the masked lanes. An
  arg-reduction reduces (value, index) pairs with tl.reduce and a combine helper that keeps
  torch's choice (the first index among equal values, a NaN beyond every number); the masked
  lanes hold a value that never wins and indices past the row.
- row, looped: the same program for rows too long for one tile. Each reduction gets its own loop
  over the row in tiles of BLOCK_N, recomputing the elementwise values it needs from the inputs
  (an arg-reduction keeps each lane's best pair across the tiles, then reduces the lanes);
  a last loop computes and stores the outputs. The launcher picks this kernel when the row does
  not fit in MAX_BLOCK_N columns.
- total: whole-tensor reductions in two kernels: each program of the first reduces BLOCK
  elements to one partial per reduction, one program of the second reduces the partials in a
  fixed order (deterministic) and computes the scalar results. An arg-reduction's partial is
  its block's best (value, flat index) pair, in two buffers.
- gemm: one program per (BLOCK_M, BLOCK_N) tile of a matrix product (grid axis 2: the batch of
  a bmm); the operands are read through the strides the launcher passes, K in BLOCK_K steps,
  tl.dot accumulating in fp32; the epilogue statements run on the [BLOCK_M, BLOCK_N] tile with
  `row` ([BLOCK_M, 1], the output's flat row) and `cols` ([1, BLOCK_N]) in place of the row
  kernel's scalars, so per-row and per-column loads broadcast over it.

Everything inside a kernel is computed in fp32 (loads convert); a value the reference holds in
fp16, bf16 or fp8 is rounded to that type where the reference rounds it; stores cast to the
output's dtype.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass, field

import torch

TL_DTYPES: dict[torch.dtype, str] = {
    torch.float16: "tl.float16",
    torch.bfloat16: "tl.bfloat16",
    torch.float32: "tl.float32",
    torch.float64: "tl.float64",
    torch.int8: "tl.int8",
    torch.int16: "tl.int16",
    torch.int32: "tl.int32",
    torch.int64: "tl.int64",
    torch.uint8: "tl.uint8",
    torch.bool: "tl.int1",
    torch.float8_e4m3fn: "tl.float8e4nv",
    torch.float8_e5m2: "tl.float8e5",
}

POINTWISE_TUNABLES = {"BLOCK": [256, 512, 1024, 2048, 4096], "num_warps": [2, 4, 8]}
# Row programs take BLOCK_R = TILE // BLOCK_N rows at once (at least 1): short rows share a
# program instead of leaving most of its lanes idle. MAX_BLOCK_N also sets the looped kernel's
# step, which for rows read strided (a column reduction) is kept small so that BLOCK_R adjacent
# columns make each load contiguous. Calls with at most ROW_FIXED's DECODE_ROWS rows (fewer than
# a GPU has SMs, as at decode) take one row per program with their own warps and tile width
# (DECODE_ROW_*): few long rows, such as a decode step's logits, need every load wide.
ROW_TUNABLES = {
    "num_warps": [1, 2, 4, 8],
    "MAX_BLOCK_N": [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384],
    "TILE": [1024, 2048, 4096, 8192, 16384],
    "DECODE_ROW_WARPS": [2, 4, 8, 16],
    "DECODE_ROW_BLOCK_N": [2048, 4096, 8192, 16384, 32768],
}
# the launcher's fixed choices (keyword arguments with defaults, not searched): the decode
# boundary, and the launch's least number of programs where rows are packed (MIN_PROGRAMS: it
# keeps at least about half as many, 4 per SM of a large GPU, where the rows allow: packing rows
# pays where they are many, not where a few programs would each walk thousands of rows, as a
# gather of one element per row did, in 4 programs of 2048)
ROW_FIXED = {"DECODE_ROWS": 128, "MIN_PROGRAMS": 1024}
# a row program with no reduction and no scan: its columns are independent, so programs take
# BLOCK_C columns of BLOCK_R rows each (few long rows, as at decode, still fill the GPU; many
# short ones share a program)
ROW_TILED_TUNABLES = {
    "num_warps": [1, 2, 4, 8],
    "BLOCK_C": [256, 512, 1024, 2048, 4096],
    "TILE": [1024, 2048, 4096, 8192],
}
GEMM_TUNABLES = {
    "BLOCK_M": [16, 32, 64, 128, 256],
    "BLOCK_N": [16, 32, 64, 128, 256],
    "BLOCK_K": [16, 32, 64, 128],
    "num_warps": [2, 4, 8],
    "num_stages": [2, 3, 4, 5],
    "GROUP_M": [0, 4, 8, 16],
    "WRAP": [0, 1],
    "TMA": [0, 1],
    "PERSIST": [0, 1],
    "FLATTEN": [0, 1],
    "DECODE_BLOCK_M": [16, 32, 64],
    "DECODE_BLOCK_N": [32, 64, 128, 256],
    "DECODE_BLOCK_K": [32, 64, 128, 256],
    "DECODE_WARPS": [2, 4, 8],
    "DECODE_STAGES": [2, 3, 4, 5],
    "SPLIT_K": [0, 1, 2, 4, 8],
}
# the launcher's fixed choices (not searched): the decode/prefill boundary, split-K's target
GEMM_FIXED = {"DECODE_ROWS": 64, "SPLIT_TARGET": 192}
# names the gemm kernel and launcher use besides the others' (parameters may not take them)
GEMM_WORDS = set(
    "M K B BLOCK_M BLOCK_K num_stages K_PER GROUP WRAP EVEN_K SPLIT part_ptr grid B_KMAJOR".split()
) | set(GEMM_TUNABLES)
TILE_KINDS = ("full", "col", "batch_col")
ROW_KINDS = ("row", "scalar", "batch_row")
# inputs read by statements at computed offsets, never loaded by the kernel's head: slices of
# wide inputs, index-map sources, broadcast inputs (`agents.offline.codegen.broadcasts`)
UNLOADED = ("wide", "window", "broadcast")

# names the kernels and launchers use for themselves
KERNEL_WORDS = set(
    "pid offs mask WIDE row _rmask _cmask base cols start N R n tl float range inner split "
    "split_stride".split()
)
LAUNCHER_WORDS = set(
    "N R n P WIDE BLOCK BLOCK_N BLOCK_R BLOCK_C MAX_BLOCK_N TILE DECODE_ROWS MIN_PROGRAMS "
    "DECODE_ROW_WARPS DECODE_ROW_BLOCK_N num_warps grid torch triton tl inner float isinstance "
    "kernel min max "
    "type tuple list NotImplementedError split split_stride".split()
)
BUILTIN_NAMES = set(dir(builtins))
_GENERATED = re.compile(r"^(v|acc)\d+$")
_LAUNCHER_GENERATED = re.compile(
    r"^(out|part|group_)\d+$|_row_stride$|^(inv|sqrt|rsqrt)_|_dim\d+$|_last$"
)


@dataclass(frozen=True)
class Param:
    """A tensor input the kernel reads."""

    name: str  # the entry point's parameter
    var: str  # the kernel variable holding its loaded value
    kind: str  # shapes.Kind.name; "wide" ones are read by slice statements, not loaded
    dtype: torch.dtype
    group: str = ""  # batch kinds: the kernel argument counting the rows that share one value


@dataclass(frozen=True)
class Stmt:
    """`target = expr` in the kernel (for a reduction: target = reduce(expr) over the row)."""

    target: str
    expr: str
    tile: bool  # a vector over the tile's columns/elements, else one value per program
    deps: tuple[str, ...]  # the variables expr reads
    note: str  # the aten op it translates
    # "sum" | "max" | "min"; "argmax" | "argmin": target = the row index (int64) of expr's first
    # max/min, a NaN beyond every number (torch.argmax/argmin), compared in `reduce_dtype`; the
    # value at that index is `_<target>_best`
    reduce: str | None = None
    deps_reduced: bool = False  # reads a reduction's result (directly or not)
    scan: str | None = None  # "sum" | "prod": target = inclusive scan of expr along the row
    reduce_dtype: str = "tl.float32"  # an arg-reduction's comparison: tl.float32 or tl.int64


@dataclass(frozen=True)
class Output:
    var: str  # the kernel variable stored
    kind: str  # "full" | "row" | "scalar"
    dtype: torch.dtype
    shape: str  # the launcher's expression for its shape
    into: str = ""  # the launcher parameter (a caller's buffer) it is stored into; "": a new tensor


@dataclass(frozen=True)
class Stores:
    """A call that writes into the caller's arguments: the graph's last outputs are stored into
    `buffers` (launcher parameters, contiguous, checked by the launcher) instead of new tensors;
    the launcher returns `returned`, item by item (a buffer's name, or "" for the next new
    output; none: None), as a tuple when `tuple_result`."""

    buffers: tuple[str, ...]
    returned: tuple[str, ...] = ()
    tuple_result: bool = False


@dataclass(frozen=True)
class Gemm:
    """The matrix multiply of a gemm program: parameters a and b viewed by a_views/b_views
    (launcher text such as '.permute(1, 0)'), multiplied in dot_dtype; bmm when batched."""

    a: str
    b: str
    a_views: str
    b_views: str
    dot_dtype: torch.dtype
    batched: bool


@dataclass
class Program:
    entry_point: str
    structure: str  # "pointwise" | "row" | "total" | "gemm"
    params: list[str]  # the launcher's: the entry point's (keyword-only ones too), by position
    primary: str  # the input whose shape is the problem's shape
    inputs: list[Param]
    stmts: list[Stmt]
    outputs: list[Output]
    ops: list[str]
    symbols: dict[str, str] = field(default_factory=dict)  # kernel arg -> launcher expression
    helpers: set[str] = field(default_factory=set)
    tuple_output: bool = False  # the reference returns a tuple (even of one tensor)
    width: str = ""  # row structure: the launcher's expression for N
    gemm: Gemm | None = None  # gemm structure: the multiply
    inner: str = ""  # row structure, rows read strided: the kernel argument for the stride
    # row structure, rows of a reduction over leading and trailing dims: the kernel argument
    # for I, the trailing dims' numel (`<split>_stride` holds K * I, K the kept dims' numel)
    split: str = ""
    defaults: dict[str, str] = field(default_factory=dict)  # parameter -> its default's text
    returned: tuple[str, ...] | None = None  # a call that writes: `Stores.returned`
    ramps: bool = False  # element indices are values (index ramps), not only addresses
    # symbols the kernel divides by (index maps' and broadcasts' coordinate decodes): passed as
    # tl.constexpr, so a division or remainder by one is a multiply and a shift, not a ~20
    # instruction integer division an element (one compile per distinct value, like
    # torch.compile's static shapes)
    static: set[str] = field(default_factory=set)


def safe_name(name: str, taken: set[str]) -> str:
    """A kernel variable for parameter `name`: the name itself unless the kernel uses it or it
    is a Python builtin (the static check refuses `input`, `open`... outside parameters)."""
    if name.startswith("_"):
        name = "in" + name
    while name in taken or name in KERNEL_WORDS or name in BUILTIN_NAMES or _GENERATED.match(name):
        name = name + "_"
    return name


def launcher_safe(name: str) -> str:
    """A launcher parameter for entry-point parameter `name`: the name itself unless the
    launcher uses it (N, B, out0, ...); the entry point passes its arguments by position."""
    if launcher_clash([name]) is None and name not in GEMM_WORDS:
        return name
    name = f"arg_{name}"
    while launcher_clash([name]) is not None or name in GEMM_WORDS:
        name += "_"
    return name


def launcher_clash(params: list[str]) -> str | None:
    """A parameter name the launcher would overwrite (it uses N, R, out0, BLOCK... itself)."""
    for name in params:
        if name in LAUNCHER_WORDS or _LAUNCHER_GENERATED.search(name):
            return name
    return None


# -- helpers written into the module when used ---------------------------------------------------

HELPERS: dict[str, str] = {
    "_expm1": '''
@triton.jit
def _expm1(x):
    """exp(x) - 1 without cancellation near 0: a Taylor polynomial for |x| < 0.25."""
    p = x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x * (1.0 / 120.0 + x * (1.0 / 720.0 + x * (1.0 / 5040.0)))))))
    return tl.where(tl.abs(x) < 0.25, p, tl.exp(x) - 1.0)
''',
    "_log1p": '''
@triton.jit
def _log1p(x):
    """log(1 + x) without cancellation near 0 (Goldberg: log(u) * x / (u - 1) with u = 1 + x)."""
    u = 1.0 + x
    d = tl.where(u == 1.0, 1.0, u - 1.0)
    return tl.where(u == 1.0, x, tl.where(u == float("inf"), u, tl.log(u) * (x / d)))
''',
    "_tanh": '''
@triton.jit
def _tanh(x):
    """tanh(x) = -expm1(-2|x|) / (2 + expm1(-2|x|)) with x's sign: no overflow, exact near 0."""
    e = _expm1(-2.0 * tl.abs(x))
    t = -e / (2.0 + e)
    return tl.where(x < 0, -t, t)
''',
    "_round_half_even": '''
@triton.jit
def _round_half_even(x):
    """Round to the nearest integer, ties to even (torch.round)."""
    f = tl.floor(x)
    d = x - f
    odd = f - 2.0 * tl.floor(f * 0.5)
    return tl.where(d > 0.5, f + 1.0, tl.where(d < 0.5, f, f + odd))
''',
    "_asin": '''
@triton.jit
def _asin(x):
    """asin(x): its Taylor series (11 terms, Horner in x^2) for |x| < 0.5; above, Abramowitz and
    Stegun 4.4.46 (pi/2 - sqrt(1 - |x|) times a degree-7 polynomial, error under 2e-8), with x's
    sign; NaN for |x| > 1."""
    a = tl.abs(x)
    z = x * x
    small = x * (1.0 + z * (0.16666666666666666 + z * (0.075 + z * (0.044642857142857144 + z * (0.030381944444444444 + z * (0.022372159090909092 + z * (0.017352764423076924 + z * (0.01396484375 + z * (0.011551800896139705 + z * (0.009761609529194078 + z * (0.008390335809616815)))))))))))
    big = 1.5707963267948966 - tl.sqrt(1.0 - a) * (1.570796305 + a * ((-0.2145988016) + a * (0.0889789874 + a * ((-0.0501743046) + a * (0.030891881 + a * ((-0.0170881256) + a * (0.0066700901 + a * ((-0.0012624911)))))))))
    return tl.where(a < 0.5, small, tl.where(x < 0, -big, big))
''',
}
_ARG_COMBINE = '''
@triton.jit
def _{how}_combine(v1, i1, v2, i2):
    """Of two (value, index) pairs, the one torch.{how} keeps: the {word} value, a NaN beyond
    every number, the smaller index between equal values (and between NaNs). A total order, so
    tl.reduce may combine the pairs in any order."""
    n1 = v1 != v1
    n2 = v2 != v2
    same = (v1 == v2) | (n1 & n2)
    first = (n1 & (n2 == 0)) | ((n1 == n2) & (v1 {compare} v2)) | (same & (i1 < i2))
    return tl.where(first, v1, v2), tl.where(first, i1, i2)
'''
_WINDOW_LOOP = '''
@triton.jit
def _window_{how}(src_ptr, base, d0, h0, w0, D, H, W, mask, KD, KH, KW, DD, DH, DW):
    """The {how} of a pool's window, looped at run time (a window too large to unroll): KD x KH
    x KW taps, DD, DH, DW apart, from (d0, h0, w0) in the (D, H, W) map at `base` (a 2-D pool:
    d0 zeros, D = KD = 1); taps outside the map read {fill}. In fp32{nan}."""
    acc = (w0 * 0).to(tl.float32) + {fill}
    for i in range(0, KD):
        d = d0 + i * DD
        ok_d = mask & (d >= 0) & (d < D)
        for j in range(0, KH):
            h = h0 + j * DH
            ok_h = ok_d & (h >= 0) & (h < H)
            line = base + (d * H + h) * W
            for k in range(0, KW):
                w = w0 + k * DW
                v = tl.load(src_ptr + line + w, mask=ok_h & (w >= 0) & (w < W), other={fill})
                {combine}
    return acc
'''
HELPERS["_window_sum"] = _WINDOW_LOOP.format(
    how="sum", fill="0.0", nan="", combine="acc += v.to(tl.float32)"
)
HELPERS["_window_max"] = _WINDOW_LOOP.format(
    how="max",
    fill='float("-inf")',
    nan=", a NaN winning as in torch",
    combine="v = v.to(tl.float32)\n                acc = tl.where((v > acc) | (v != v), v, acc)",
)
HELPERS["_argmax_combine"] = _ARG_COMBINE.format(how="argmax", word="larger", compare=">")
HELPERS["_argmin_combine"] = _ARG_COMBINE.format(how="argmin", word="smaller", compare="<")
HELPER_NEEDS = {"_tanh": ["_expm1"]}


def helper_sources(names: set[str]) -> list[str]:
    wanted = set(names)
    for name in list(names):
        wanted.update(HELPER_NEEDS.get(name, []))
    order = ["_expm1", "_log1p", "_tanh", "_round_half_even", "_asin"]
    order += ["_argmax_combine", "_argmin_combine", "_window_sum", "_window_max"]
    return [HELPERS[n].strip() + "\n" for n in order if n in wanted]


# -- kernel bodies -------------------------------------------------------------------------------


def _load(p: Param, structure: str, step: str = "") -> str:
    other = "0.0" if p.dtype.is_floating_point else "0"
    if p.kind == "scalar":
        expr = f"tl.load({p.name}_ptr)"
    elif p.kind == "row":  # [BLOCK_R, 1]: masked by the rows alone
        expr = f"tl.load({p.name}_ptr + row, mask=_rmask, other={other})"
    elif p.kind == "batch_row":
        expr = f"tl.load({p.name}_ptr + row // {p.group}, mask=_rmask, other={other})"
    elif p.kind == "col":  # [1, BLOCK_N]: masked by the columns alone
        expr = f"tl.load({p.name}_ptr + cols, mask=_cmask, other={other})"
    elif p.kind == "batch_col":
        expr = f"tl.load({p.name}_ptr + (row // {p.group}) * N + cols, mask=mask, other={other})"
    elif structure == "pointwise":
        expr = f"tl.load({p.name}_ptr + offs, mask=mask, other={other})"
    else:
        expr = f"tl.load({p.name}_ptr + base + cols{step}, mask=mask, other={other})"
    if p.dtype.is_floating_point:
        expr += ".to(tl.float32)"
    return f"{p.var} = {expr}"


IDENTITY = {"sum": "0.0", "max": 'float("-inf")', "min": 'float("inf")'}


def _masked(how: str, expr: str) -> str:
    """`expr` with the reduction's identity in the masked lanes."""
    return f"tl.where(mask, {expr}, {IDENTITY[how]})"


def _accumulator(how: str, k: int, block: str) -> str:
    return f"acc{k} = tl.full([{block}], {IDENTITY[how]}, tl.float32)"


def _combine(how: str, k: int, value: str) -> str:
    if how == "sum":
        return f"acc{k} = acc{k} + {value}"
    return f"acc{k} = tl.{'maximum' if how == 'max' else 'minimum'}(acc{k}, {value})"


SCAN_IDENTITY = {"sum": "0.0", "prod": "1.0"}


def _scanned(s: Stmt) -> str:
    """The inclusive scan of a [BLOCK_R, BLOCK_N] tile along its rows, the masked lanes holding
    the identity (so each row's last lane is its whole tile's sum or product)."""
    return f"tl.cum{s.scan}(tl.where(mask, {s.expr}, {SCAN_IDENTITY[s.scan]}), axis=1)"


ARG_REDUCES = ("argmax", "argmin")
INT64_MAX = "9223372036854775807"


def _arg_fill(s: Stmt) -> str:
    """What an arg-reduction's masked lanes hold: a value no real one beats."""
    if s.reduce_dtype == "tl.int64":
        return f"(-{INT64_MAX} - 1)" if s.reduce == "argmax" else INT64_MAX
    return IDENTITY["max" if s.reduce == "argmax" else "min"]


# a row program's tiles are [BLOCK_R, BLOCK_N]: reductions run along axis 1 and keep it, so a
# row's result is a [BLOCK_R, 1] column that broadcasts over the tile
ROW_INDEX = "tl.broadcast_to(cols.to(tl.int64), [BLOCK_R, BLOCK_N])"


def _arg_reduced(s: Stmt, values: str, indices: str, flat: bool = False) -> str:
    """The line reducing (value, index) pairs over the tile to the target index (int64): along
    a row program's rows (kept as a [BLOCK_R, 1] column), or (`flat`) over a 1-d block."""
    pairs = f"({values}, {indices})"
    combine = f"_{s.reduce}_combine"
    if flat:
        reduced = f"tl.reduce({pairs}, 0, {combine})"
    else:
        reduced = f"tl.reduce({pairs}, 1, {combine}, keep_dims=True)"
    return f"_{s.target}_best, {s.target} = {reduced}  # {s.note}"


def _arg_tile(s: Stmt, index: str = ROW_INDEX) -> tuple[str, str]:
    """An arg-reduction's tile of values (the masked lanes filled) and of indices (`index`: the
    rows' columns, or the flat offsets of a whole tensor; the masked lanes' lie past the end,
    so they lose every tie)."""
    return f"tl.where(mask, {s.expr}, {_arg_fill(s)})", index


def _stmt_line(s: Stmt) -> str:
    if s.scan is not None:
        return f"{s.target} = {_scanned(s)}  # {s.note}"
    if s.reduce is None:
        return f"{s.target} = {s.expr}  # {s.note}"
    if s.reduce in ARG_REDUCES:
        return _arg_reduced(s, *_arg_tile(s))
    reduced = f"tl.{s.reduce}({_masked(s.reduce, s.expr)}, axis=1, keep_dims=True)"
    return f"{s.target} = {reduced}  # {s.note}"


def _store(o: Output, i: int, structure: str, step: str = "") -> str:
    if o.kind == "scalar":  # a row program's scalar: a buffer's new value, stored by row 0
        value = f"{o.var}.to(out{i}_ptr.dtype.element_ty)"
        return f"tl.store(out{i}_ptr + row * 0, {value}, mask=row == 0)"
    if o.kind == "row":
        where = f"out{i}_ptr + row"
        return f"tl.store({where}, {o.var}.to(out{i}_ptr.dtype.element_ty), mask=_rmask)"
    where = f"out{i}_ptr + offs" if structure == "pointwise" else f"out{i}_ptr + base + cols{step}"
    return f"tl.store({where}, {o.var}.to(out{i}_ptr.dtype.element_ty), mask=mask)"


def _signature(prog: Program, sizes: list[str], constexprs: list[str]) -> str:
    ptrs = [f"{p.name}_ptr" for p in prog.inputs] + [
        f"out{i}_ptr" for i in range(len(prog.outputs))
    ]
    symbols = [f"{s}: tl.constexpr" if s in prog.static else s for s in prog.symbols]
    args = ptrs + sizes + symbols + [f"{c}: tl.constexpr" for c in constexprs]
    return ", ".join(args)


# the launcher's rule for 64-bit element offsets: a tensor of at least 2**30 elements (a block's
# offsets and the window and broadcast indices computed from them then stay below 2**31 in int32)
WIDE_AT = 2**30


def pointwise_kernel(prog: Program, name: str) -> str:
    """Flat over the output: BLOCK elements a program. Offsets are int32 unless the launcher
    says WIDE: the index math of windows and broadcasts (divisions, remainders) is several times
    slower in 64 bits."""
    body = [
        "pid = tl.program_id(0)",
        "if WIDE:",
        "    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)",
        "else:",
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)",
        "mask = offs < n",
    ]
    # window sources are read by index-map statements at computed offsets, not loaded flat
    body += [_load(p, "pointwise") for p in prog.inputs if p.kind not in UNLOADED]
    body += [_stmt_line(s) for s in prog.stmts]
    body += [_store(o, i, "pointwise") for i, o in enumerate(prog.outputs)]
    head = f"@triton.jit\ndef {name}({_signature(prog, ['n'], ['BLOCK', 'WIDE'])}):\n"
    return head + "".join(f"    {line}\n" for line in body)


def _wide(prog: Program) -> str:
    """The launcher's line deciding the pointwise kernel's WIDE: always where index ramps make
    element indices values (int64 in the reference: products of them overflow int32), else
    from the tensors' sizes."""
    if prog.ramps:
        return "WIDE = True"
    sizes = ", ".join(f"{p.name}.numel()" for p in prog.inputs)
    return f"WIDE = max(n, {sizes}) >= {WIDE_AT}" if sizes else f"WIDE = n >= {WIDE_AT}"


def _step(prog: Program) -> str:
    """How far apart a row's elements lie in the full tensors (nothing: adjacent), as text
    that follows `cols`. Split rows (`Program.split`): element c lies at (c // I) * (K * I) +
    c % I from the row's first."""
    if prog.split:
        return f" // {prog.split} * {prog.split}_stride + cols % {prog.split}"
    return f" * {prog.inner}" if prog.inner else ""


def _row_base(prog: Program) -> str:
    """The first element of the program's row in the full tensors. Rows of a reduction over a
    dim before the last are strided: row r = (o, i) starts at o * N * inner + i."""
    if prog.split:  # row r: the kept index; its first element at r * I
        return f"base = row * {prog.split}"
    if prog.inner:
        return f"base = (row // {prog.inner}) * (N * {prog.inner}) + row % {prog.inner}"
    return "base = row * N"


def columns_tiled(prog: Program) -> bool:
    """Whether the row program's columns are independent (no reduction, no scan, rows read
    contiguously), so a row can be split over programs."""
    return (
        not prog.inner
        and not prog.split
        and all(s.reduce is None and s.scan is None for s in prog.stmts)
    )


def _rows_head(prog: Program) -> list[str]:
    """A row program's first lines: its BLOCK_R rows as a [BLOCK_R, 1] column (`row`; `_rmask`
    the rows that exist, as in the gemm kernel's epilogue), and the first element of each
    (`base`). Rows are not clamped: a clamp would hide from the compiler that adjacent rows
    are adjacent in memory (rows read strided), so every per-row access is masked instead."""
    return [
        "row = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]",
        "_rmask = row < R",
        _row_base(prog),
    ]


def _columns(start: str) -> list[str]:
    """The tile's columns, a [1, BLOCK_N] row from `start`; `_cmask` those inside the row,
    `mask` the tile's elements that exist (both row and column inside)."""
    return [
        f"cols = {start}tl.arange(0, BLOCK_N)[None, :]",
        "_cmask = cols < N",
        "mask = _rmask & _cmask",
    ]


ROW_SIZES = ["N", "R"]
ROW_CONSTEXPRS = ["BLOCK_R", "BLOCK_N"]


def row_kernel(prog: Program, name: str) -> str:
    """BLOCK_R rows per program, each whole in one [BLOCK_R, BLOCK_N] tile; for a program whose
    columns are independent (`columns_tiled`), BLOCK_N columns of them (grid axis 1)."""
    step = _step(prog)
    first = "tl.program_id(1) * BLOCK_N + " if columns_tiled(prog) else ""
    body = _rows_head(prog) + _columns(first)
    body += [_load(p, "row", step) for p in prog.inputs if p.kind not in UNLOADED]
    body += [_stmt_line(s) for s in prog.stmts]
    body += [_store(o, i, "row", step) for i, o in enumerate(prog.outputs)]
    head = f"@triton.jit\ndef {name}({_signature(prog, ROW_SIZES, ROW_CONSTEXPRS)}):\n"
    return head + "".join(f"    {line}\n" for line in body)


def _tile_closure(prog: Program, roots: list[str]) -> set[str]:
    """The tile variables (statements and loads) that `roots` need, recomputed inside a loop."""
    tile_vars = {s.target for s in prog.stmts if s.tile} | {
        p.var for p in prog.inputs if p.kind in TILE_KINDS
    }
    deps = {s.target: s.deps for s in prog.stmts}
    need: set[str] = set()
    stack = [r for r in roots if r in tile_vars]
    while stack:
        var = stack.pop()
        if var in need:
            continue
        need.add(var)
        stack += [d for d in deps.get(var, ()) if d in tile_vars]
    return need


def _loop(prog: Program, need: set[str], done: set[str]) -> list[str]:
    """The body of one pass over the row: loads and tile statements in `need`, in order. A
    scan continues from the tiles before it: its carry (`carry_<target>`, a vector of equal
    lanes set up by `_carries`) is combined with the tile's own scan, then advanced by the
    tile's last lane, which holds the whole tile's sum or product."""
    lines = _columns("start + ")
    lines += [_load(p, "row", _step(prog)) for p in prog.inputs if p.var in need]
    for s in prog.stmts:
        if s.target in need:
            missing = [d for d in s.deps if d not in need and d not in done]
            if missing:
                raise ValueError(f"{s.target} needs {missing} before they are computed")
            if s.scan is None:
                lines.append(_stmt_line(s))
                continue
            op = "+" if s.scan == "sum" else "*"
            lane = "tl.arange(0, BLOCK_N)[None, :] == BLOCK_N - 1"
            last = f"tl.sum(tl.where({lane}, {s.target}, 0.0), axis=1, keep_dims=True)"
            lines += [
                f"{s.target} = {_scanned(s)}  # {s.note}",
                f"{s.target}_tile = {last}",
                f"{s.target} = {s.target} {op} carry_{s.target}",
                f"carry_{s.target} = carry_{s.target} {op} {s.target}_tile",
            ]
    return lines


def _carries(prog: Program, need: set[str]) -> list[str]:
    """Before a pass over the rows: each scan's carry, one per row, the identity."""
    return [
        f"carry_{s.target} = tl.full([BLOCK_R, 1], {SCAN_IDENTITY[s.scan]}, tl.float32)"
        for s in prog.stmts
        if s.scan is not None and s.target in need
    ]


def looped_row_kernel(prog: Program, name: str) -> str:
    """BLOCK_R rows per program, walked in [BLOCK_R, BLOCK_N] tiles: one loop per reduction,
    one to store."""
    body = _rows_head(prog)
    per_row = [p for p in prog.inputs if p.kind in ROW_KINDS]
    done = {p.var for p in per_row}
    body += [_load(p, "row") for p in per_row]
    pending = [s for s in prog.stmts if not s.tile]

    def emit_ready() -> None:
        for s in list(pending):
            if s.reduce is None and all(d in done or d in prog.symbols for d in s.deps):
                body.append(_stmt_line(s))
                done.add(s.target)
                pending.remove(s)

    emit_ready()
    for k, red in enumerate(s for s in prog.stmts if s.reduce is not None):
        need = _tile_closure(prog, list(red.deps))
        if red.reduce in ARG_REDUCES:  # per lane, the best (value, index) of the tiles so far
            body += [
                f"acc{k} = tl.full([BLOCK_R, BLOCK_N], {_arg_fill(red)}, {red.reduce_dtype})",
                f"idx{k} = tl.full([BLOCK_R, BLOCK_N], {INT64_MAX}, tl.int64)",
            ]
        else:
            body.append(_accumulator(red.reduce, k, "BLOCK_R, BLOCK_N"))
        body += ["for start in range(0, N, BLOCK_N):"]
        body += ["    " + line for line in _loop(prog, need, done)]
        if red.reduce in ARG_REDUCES:
            values, indices = _arg_tile(red)
            body += [
                f"    acc{k}, idx{k} = _{red.reduce}_combine(acc{k}, idx{k}, {values}, {indices})",
                _arg_reduced(red, f"acc{k}", f"idx{k}"),
            ]
        else:
            body += [
                "    " + _combine(red.reduce, k, _masked(red.reduce, red.expr)),
                f"{red.target} = tl.{red.reduce}(acc{k}, axis=1, keep_dims=True)  # {red.note}",
            ]
        done.add(red.target)
        if red.reduce in ARG_REDUCES:
            done.add(f"_{red.target}_best")
        pending.remove(red)
        emit_ready()
    if pending:
        raise ValueError(f"statements never computed: {[s.target for s in pending]}")
    tile_outputs = [(i, o) for i, o in enumerate(prog.outputs) if o.kind not in ROW_KINDS]
    if tile_outputs:
        need = _tile_closure(prog, [o.var for _, o in tile_outputs])
        body += _carries(prog, need)
        body.append("for start in range(0, N, BLOCK_N):")
        body += ["    " + line for line in _loop(prog, need, done)]
        body += ["    " + _store(o, i, "row", _step(prog)) for i, o in tile_outputs]
    body += [_store(o, i, "row") for i, o in enumerate(prog.outputs) if o.kind in ROW_KINDS]
    head = f"@triton.jit\ndef {name}({_signature(prog, ROW_SIZES, ROW_CONSTEXPRS)}):\n"
    return head + "".join(f"    {line}\n" for line in body)


def _partial_ptrs(reductions: list[Stmt]) -> list[str]:
    """The partials' buffers: one per reduction (an arg-reduction's indices beside its values)."""
    ptrs = []
    for k, r in enumerate(reductions):
        ptrs += [f"part{k}_ptr", f"pidx{k}_ptr"] if r.reduce in ARG_REDUCES else [f"part{k}_ptr"]
    return ptrs


def _partial(r: Stmt, k: int) -> list[str]:
    """A program's partial of reduction k over its BLOCK elements, stored at its pid."""
    if r.reduce in ARG_REDUCES:
        return [
            _arg_reduced(r, *_arg_tile(r, "offs"), flat=True),
            f"tl.store(part{k}_ptr + pid, _{r.target}_best)",
            f"tl.store(pidx{k}_ptr + pid, {r.target})",
        ]
    return [f"tl.store(part{k}_ptr + pid, tl.{r.reduce}({_masked(r.reduce, r.expr)}, axis=0))"]


def _finish(red: Stmt, k: int) -> list[str]:
    """Reduce a reduction's partials (one per program of the first kernel) in tiles of BLOCK_P."""
    if red.reduce in ARG_REDUCES:  # per lane the best (value, index) pair, then across lanes
        fill = _arg_fill(red)
        values = f"tl.load(part{k}_ptr + idx, mask=idx < P, other={fill})"
        indices = f"tl.load(pidx{k}_ptr + idx, mask=idx < P, other={INT64_MAX})"
        return [
            f"acc{k} = tl.full([BLOCK_P], {fill}, {red.reduce_dtype})",
            f"idx{k} = tl.full([BLOCK_P], {INT64_MAX}, tl.int64)",
            "for start in range(0, P, BLOCK_P):",
            "    idx = start + tl.arange(0, BLOCK_P)",
            f"    acc{k}, idx{k} = _{red.reduce}_combine(acc{k}, idx{k}, {values}, {indices})",
            _arg_reduced(red, f"acc{k}", f"idx{k}", flat=True),
        ]
    load = f"tl.load(part{k}_ptr + idx, mask=idx < P, other={IDENTITY[red.reduce]})"
    return [
        _accumulator(red.reduce, k, "BLOCK_P"),
        "for start in range(0, P, BLOCK_P):",
        "    idx = start + tl.arange(0, BLOCK_P)",
        "    " + _combine(red.reduce, k, load),
        f"{red.target} = tl.{red.reduce}(acc{k}, axis=0)  # {red.note}",
    ]


def _kernel(name: str, args: list[str], body: list[str]) -> str:
    return f"@triton.jit\ndef {name}({', '.join(args)}):\n" + "".join(f"    {ln}\n" for ln in body)


def total_kernels(prog: Program, partial: str, finish: str) -> list[str]:
    """Two kernels for reductions of the whole tensor: each program of the first reduces BLOCK
    elements to one partial per reduction; one program of the second reduces the partials (in a
    fixed order: the result is deterministic) and computes what follows from them."""
    reductions = [s for s in prog.stmts if s.reduce is not None]
    parts = _partial_ptrs(reductions)
    scalars = [p for p in prog.inputs if p.kind == "scalar"]
    need = _tile_closure(prog, [d for r in reductions for d in r.deps])
    body = [
        "pid = tl.program_id(0)",
        "offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)",
        "mask = offs < n",
    ]
    body += [_load(p, "pointwise") for p in prog.inputs if p.kind == "scalar" or p.var in need]
    body += [
        _stmt_line(s)
        for s in prog.stmts
        if s.target in need or not (s.tile or s.reduce or s.deps_reduced)
    ]
    body += [line for k, r in enumerate(reductions) for line in _partial(r, k)]
    ptrs = [f"{p.name}_ptr" for p in prog.inputs]
    first = _kernel(partial, ptrs + parts + ["n", *prog.symbols, "BLOCK: tl.constexpr"], body)

    body = [_load(p, "pointwise") for p in scalars]
    for k, red in enumerate(reductions):
        body += _finish(red, k)
    body += [_stmt_line(s) for s in prog.stmts if not s.tile and s.reduce is None]
    body += [
        f"tl.store(out{i}_ptr, {o.var}.to(out{i}_ptr.dtype.element_ty))"
        for i, o in enumerate(prog.outputs)
    ]
    outs = [f"out{i}_ptr" for i in range(len(prog.outputs))]
    args = [f"{p.name}_ptr" for p in scalars] + parts + outs
    second = _kernel(finish, args + ["P", "n", *prog.symbols, "BLOCK_P: tl.constexpr"], body)
    return [first, second]


# -- launchers -----------------------------------------------------------------------------------


def _inputs_ready(prog: Program) -> list[str]:
    """The launcher's first lines: each input made contiguous, except the caller's buffers the
    kernel stores into, which must be contiguous already (a copy would take the stores)."""
    buffers = [o.into for o in prog.outputs if o.into]
    lines = [f"{p.name} = {p.name}.contiguous()" for p in prog.inputs if p.name not in buffers]
    for name in buffers:
        why = f"{name} is not contiguous; the generated kernel stores into it flat, in place"
        lines += [f"if not {name}.is_contiguous():", f"    raise ValueError({why!r})"]
    return lines


def _allocations(prog: Program) -> list[str]:
    """The outputs: new tensors, or the caller's buffers (of the output's shape) stored into."""
    lines = []
    dtypes = {p.name: p.dtype for p in prog.inputs}
    for i, o in enumerate(prog.outputs):
        if o.into:
            have, want = f"tuple({o.into}.shape)", f"tuple({o.shape})"
            why = f"{o.into} has shape {{{have}}}; the value stored into it has shape {{{want}}}"
            lines += [f"if {have} != {want}:", f"    raise ValueError(f{why!r})"]
            lines.append(f"out{i} = {o.into}")
            continue
        same = [name for name, dt in dtypes.items() if dt == o.dtype]
        dtype = f"{same[0]}.dtype" if same else str(o.dtype)
        lines.append(
            f"out{i} = torch.empty({o.shape}, dtype={dtype}, device={prog.primary}.device)"
        )
    return lines


def _params(prog: Program) -> list[str]:
    """The launcher's parameters, with their defaults where it is the entry point."""
    return [f"{p}={prog.defaults[p]}" if p in prog.defaults else p for p in prog.params]


def _returns(prog: Program) -> str:
    """The launcher's return value: its new outputs, or (a call that writes) what the reference
    returns, new outputs and written buffers in its order."""
    names = [f"out{i}" for i, o in enumerate(prog.outputs) if not o.into]
    if prog.returned is not None:
        new = iter(names)
        names = [item or next(new) for item in prog.returned]
        if not names:
            return "None"
    if not prog.tuple_output:
        return names[0]
    return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"


def _launch_args(prog: Program, size: str) -> str:
    args = [p.name for p in prog.inputs] + [f"out{i}" for i in range(len(prog.outputs))]
    return ", ".join(args + [size] + list(prog.symbols))


def pointwise_launcher(prog: Program, kernel: str, tunables: dict[str, int]) -> str:
    params = ", ".join(
        _params(prog)
        + [f"BLOCK: int = {tunables['BLOCK']}", f"num_warps: int = {tunables['num_warps']}"]
    )
    body = _inputs_ready(prog)
    body += _allocations(prog)
    body += ["n = out0.numel()", "if n == 0:", f"    return {_returns(prog)}"]
    body += [f"{name} = {expr}" for name, expr in prog.symbols.items()]
    body += [
        _wide(prog),
        "grid = (triton.cdiv(n, BLOCK),)",
        f"{kernel}[grid]({_launch_args(prog, 'n')}, BLOCK=BLOCK, WIDE=WIDE, num_warps=num_warps)",
        f"return {_returns(prog)}",
    ]
    return f"def {prog.entry_point}({params}):\n" + "".join(f"    {line}\n" for line in body)


def _row_launcher_head(prog: Program, tunables: dict[str, int]) -> tuple[str, list[str]]:
    """A row launcher's parameters (the entry's, then `tunables` with their defaults) and the
    body up to the launch: contiguous inputs, N, the outputs, the empty case, R, the symbols."""
    params = ", ".join(_params(prog) + [f"{k}: int = {v}" for k, v in tunables.items()])
    first, out = next((i, o) for i, o in enumerate(prog.outputs) if o.kind != "scalar")
    rows = f"out{first}.numel()" if out.kind == "row" else f"out{first}.numel() // N"
    body = _inputs_ready(prog)
    body += [f"N = {prog.width}"]
    body += _allocations(prog)
    body += ["if N == 0 or out0.numel() == 0:", f"    return {_returns(prog)}", f"R = {rows}"]
    body += [f"{name} = {expr}" for name, expr in prog.symbols.items()]
    return params, body


def rows_per_program(prog: Program) -> str:
    """The launcher's line for BLOCK_R: TILE // BLOCK_N, at least 1, a power of 2, no more than R
    needs; for rows read contiguously also no more than keeps MIN_PROGRAMS programs. Rows read
    strided are not capped: there BLOCK_R adjacent columns are what makes each load contiguous."""
    cap = "R" if prog.inner or prog.split else "R // MIN_PROGRAMS"
    return f"BLOCK_R = triton.next_power_of_2(max(1, min(TILE // BLOCK_N, {cap})))"


def tiled_row_launcher(prog: Program, kernel: str, tunables: dict[str, int]) -> str:
    """The launcher of a row program with independent columns: a (row blocks, column tiles)
    grid, tiles of min(next_power_of_2(N), BLOCK_C) columns and BLOCK_R rows."""
    fixed = {"MIN_PROGRAMS": ROW_FIXED["MIN_PROGRAMS"]}
    params, body = _row_launcher_head(prog, {k: tunables[k] for k in ROW_TILED_TUNABLES} | fixed)
    grid = "(triton.cdiv(R, BLOCK_R), triton.cdiv(N, BLOCK_N))"
    body += [
        "BLOCK_N = min(triton.next_power_of_2(N), BLOCK_C)",
        rows_per_program(prog),
        f"{kernel}[{grid}]({_launch_args(prog, 'N, R')}, BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N, num_warps=num_warps)",
        f"return {_returns(prog)}",
    ]
    return f"def {prog.entry_point}({params}):\n" + "".join(f"    {line}\n" for line in body)


def row_launcher(prog: Program, one_pass: str, looped: str, tunables: dict[str, int]) -> str:
    params, body = _row_launcher_head(prog, {k: tunables[k] for k in ROW_TUNABLES} | ROW_FIXED)
    args = _launch_args(prog, "N, R")
    body += [
        "if R <= DECODE_ROWS:  # few rows: one a program, the decode configuration",
        "    num_warps, MAX_BLOCK_N, TILE = DECODE_ROW_WARPS, DECODE_ROW_BLOCK_N, 1",
        "BLOCK_N = triton.next_power_of_2(N)",
        "if BLOCK_N <= MAX_BLOCK_N:",
        f"    kernel = {one_pass}",
        "else:",
        f"    kernel, BLOCK_N = {looped}, MAX_BLOCK_N",
        rows_per_program(prog),
        f"kernel[(triton.cdiv(R, BLOCK_R),)]({args}, BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N, num_warps=num_warps)",
        f"return {_returns(prog)}",
    ]
    return f"def {prog.entry_point}({params}):\n" + "".join(f"    {line}\n" for line in body)


def total_launcher(prog: Program, partial: str, finish: str, tunables: dict[str, int]) -> str:
    params = ", ".join(
        _params(prog)
        + [f"BLOCK: int = {tunables['BLOCK']}", f"num_warps: int = {tunables['num_warps']}"]
    )
    full = next(p.name for p in prog.inputs if p.kind == "full")
    scalars = [p.name for p in prog.inputs if p.kind == "scalar"]
    reductions = [s for s in prog.stmts if s.reduce is not None]
    parts = [ptr.removesuffix("_ptr") for ptr in _partial_ptrs(reductions)]
    outs = [f"out{i}" for i in range(len(prog.outputs))]
    body = _inputs_ready(prog)
    body += _allocations(prog)
    body += [f"n = {full}.numel()", "P = max(triton.cdiv(n, BLOCK), 1)"]
    for k, r in enumerate(reductions):  # an arg-reduction's values as it compares them
        dtypes = ["torch.int64" if r.reduce_dtype == "tl.int64" else "torch.float32"]
        dtypes += ["torch.int64"] if r.reduce in ARG_REDUCES else []  # its indices
        for part, dtype in zip(("part", "pidx"), dtypes, strict=False):
            body.append(
                f"{part}{k} = torch.empty((P,), dtype={dtype}, device={prog.primary}.device)"
            )
    body += [f"{name} = {expr}" for name, expr in prog.symbols.items()]
    syms = list(prog.symbols)
    first = [p.name for p in prog.inputs] + parts + ["n", *syms]
    second = scalars + parts + outs + ["P", "n", *syms]
    body += [
        f"{partial}[(P,)]({', '.join(first)}, BLOCK=BLOCK, num_warps=num_warps)",
        f"{finish}[(1,)]({', '.join(second)}, BLOCK_P=1024, num_warps=4)",
        f"return {_returns(prog)}",
    ]
    return f"def {prog.entry_point}({params}):\n" + "".join(f"    {line}\n" for line in body)


# -- gemm ----------------------------------------------------------------------------------------


def _gemm_load(p: Param) -> str:
    """An epilogue input over the (BLOCK_M, BLOCK_N) tile: `row` is [BLOCK_M, 1] (the output's
    flat row), `cols` [1, BLOCK_N]."""
    other = "0.0" if p.dtype.is_floating_point else "0"
    where, mask = {
        "scalar": ("", None),
        "row": (" + row", "_rmask"),
        "batch_row": (f" + row // {p.group}", "_rmask"),
        "col": (" + cols", "_cmask"),
        "batch_col": (f" + (row // {p.group}) * N + cols", "mask"),
        "full": (" + base + cols", "mask"),
    }[p.kind]
    expr = f"tl.load({p.name}_ptr{where}"
    expr += ")" if mask is None else f", mask={mask}, other={other})"
    if p.dtype.is_floating_point:
        expr += ".to(tl.float32)"
    return f"{p.var} = {expr}"


def _operands(g: Gemm) -> list[str]:
    """The parameters the multiply reads (one when both operands view the same input: x @ x.T)."""
    return [g.a] if g.a == g.b else [g.a, g.b]


def _gemm_tile() -> list[str]:
    """The program's output tile: programs walk the tiles in groups of GROUP tile rows (down a
    group's rows first, then across its columns), so the programs running at once share the
    operand panels they read while those stay in L2; GROUP = all rows is column-major order."""
    return [
        "_pid = tl.program_id(0)",
        "_pid_b = tl.program_id(1).to(tl.int64)",
        *_tile_of_pid(),
    ]


def _tile_of_pid() -> list[str]:
    """Tile (_pid_m, _pid_n) and its offsets from the tile index `_pid` (see `_gemm_tile`)."""
    return [
        "_tiles_m = tl.cdiv(M, BLOCK_M)",
        "_per_group = GROUP * tl.cdiv(N, BLOCK_N)",
        "_first_m = (_pid // _per_group) * GROUP",
        "_rows_here = tl.minimum(_tiles_m - _first_m, GROUP)",
        "_pid_m = _first_m + (_pid % _per_group) % _rows_here",
        "_pid_n = (_pid % _per_group) // _rows_here",
        "_offs_m = _pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
        "_offs_n = _pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
    ]


def _gemm_epilogue(prog: Program) -> list[str]:
    """From the fp32 accumulator tile `_acc` to the stored outputs."""
    body = [
        "row = _pid_b * M + _offs_m[:, None].to(tl.int64)",
        "cols = _offs_n[None, :]",
        "base = row * N",
        "_rmask = _offs_m[:, None] < M",
        "_cmask = cols < N",
        "mask = _rmask & _cmask",
    ]
    body += [_gemm_load(p) for p in prog.inputs]
    body += [_stmt_line(s) for s in prog.stmts]
    for i, o in enumerate(prog.outputs):
        body.append(
            f"tl.store(out{i}_ptr + base + cols, {o.var}.to(out{i}_ptr.dtype.element_ty), mask=mask)"
        )
    return body


def _gemm_args(prog: Program) -> list[str]:
    return [f"{p.name}_ptr" for p in prog.inputs] + [
        f"out{i}_ptr" for i in range(len(prog.outputs))
    ]


def _tma_loop(g: Gemm, dot: str, precision: str) -> list[str]:
    """The K loop reading both operands through TMA tensor descriptors (Hopper's copy engine
    moves each tile into shared memory, no address math per element; rows, columns and K past
    the edge read as zero). The launcher sets TMA only where the descriptors are legal: each
    operand has a unit stride along its last dim, 16-byte aligned base and other strides. B is
    read as stored: [N, K] when K is its contiguous dim (B_KMAJOR, nn.Linear's weight), the
    tile transposed for the dot, else [K, N]."""
    return _tma_descriptors(g) + _tma_k_loop(dot, precision, "_k_lo", "_k_hi")


def _tma_descriptors(g: Gemm) -> list[str]:
    """The operands' tensor descriptors (see `_tma_loop`), for batch `_pid_b`."""
    a, b = _operands(g)[0], _operands(g)[-1]
    return [
        "_a_desc = tl.make_tensor_descriptor(",
        f"    {a}_ptr + _pid_b * _sab, shape=[M, K], strides=[_sam, 1], block_shape=[BLOCK_M, BLOCK_K]",
        ")",
        "if B_KMAJOR:",
        "    _b_desc = tl.make_tensor_descriptor(",
        f"        {b}_ptr + _pid_b * _sbb, shape=[N, K], strides=[_sbn, 1], block_shape=[BLOCK_N, BLOCK_K]",
        "    )",
        "else:",
        "    _b_desc = tl.make_tensor_descriptor(",
        f"        {b}_ptr + _pid_b * _sbb, shape=[K, N], strides=[_sbk, 1], block_shape=[BLOCK_K, BLOCK_N]",
        "    )",
    ]


def _tma_k_loop(dot: str, precision: str, lo: str, hi: str) -> list[str]:
    """The fp32 accumulator of tile (_pid_m, _pid_n) over K from `lo` to `hi`, both operands
    read through the descriptors of `_tma_descriptors`."""
    return [
        "_acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
        f"for _k0 in range({lo}, {hi}, BLOCK_K):",
        "    _a = _a_desc.load([_pid_m * BLOCK_M, _k0])",
        "    if B_KMAJOR:",
        "        _b = _b_desc.load([_pid_n * BLOCK_N, _k0]).T",
        "    else:",
        "        _b = _b_desc.load([_k0, _pid_n * BLOCK_N])",
        f"    _acc = tl.dot(_a.to({dot}), _b.to({dot}), _acc{precision})",
    ]


def gemm_kernel(prog: Program, name: str) -> str:
    """The product kernel. WRAP: operand rows and columns past the edge re-read valid ones
    (offsets modulo M and N; their results are never stored), so the loads need no M/N mask,
    and the K loop needs none when every K slice is a multiple of BLOCK_K (EVEN_K). Without
    WRAP every load is masked. TMA: both operands through tensor descriptors (`_tma_loop`).
    SPLIT > 1 (split-K): program axis 2 takes one K slice of K_PER and stores its fp32 partial
    tile into part_ptr; the sum kernel adds the slices and runs the epilogue. SPLIT == 1: the
    epilogue runs here."""
    g = prog.gemm
    assert g is not None
    dot = TL_DTYPES[g.dot_dtype]
    precision = ', input_precision="ieee"' if g.dot_dtype == torch.float32 else ""
    pointers = [
        "_offs_k = _k_lo + tl.arange(0, BLOCK_K)",
        # no contiguity hints on wrapped offsets: a wrapped tile is not contiguous, and where M
        # or N is the operand's contiguous dim a hint would widen loads past the tensor's end
        "if WRAP:",
        "    _am = _offs_m % M",
        "    _bn = _offs_n % N",
        "else:",
        "    _am = _offs_m",
        "    _bn = _offs_n",
        "_a_ptrs = (",
        f"    {g.a}_ptr + _pid_b * _sab + _am[:, None].to(tl.int64) * _sam",
        "    + _offs_k[None, :].to(tl.int64) * _sak",
        ")",
        "_b_ptrs = (",
        f"    {g.b}_ptr + _pid_b * _sbb + _offs_k[:, None].to(tl.int64) * _sbk",
        "    + _bn[None, :].to(tl.int64) * _sbn",
        ")",
        "_acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
        "for _k0 in range(_k_lo, _k_hi, BLOCK_K):",
        "    if WRAP and EVEN_K:",
        "        _a = tl.load(_a_ptrs)",
        "        _b = tl.load(_b_ptrs)",
        "    elif WRAP:",
        "        _ks = _k0 - _k_lo + _offs_k",
        "        _a = tl.load(_a_ptrs, mask=_ks[None, :] < _k_hi, other=0.0)",
        "        _b = tl.load(_b_ptrs, mask=_ks[:, None] < _k_hi, other=0.0)",
        "    else:",
        "        _ks = _k0 - _k_lo + _offs_k",
        "        _a = tl.load(_a_ptrs, mask=(_offs_m[:, None] < M) & (_ks[None, :] < _k_hi), other=0.0)",
        "        _b = tl.load(_b_ptrs, mask=(_ks[:, None] < _k_hi) & (_offs_n[None, :] < N), other=0.0)",
        f"    _acc = tl.dot(_a.to({dot}), _b.to({dot}), _acc{precision})",
        "    _a_ptrs += BLOCK_K * _sak",
        "    _b_ptrs += BLOCK_K * _sbk",
    ]
    body = _gemm_tile() + [
        "_k_lo = tl.program_id(2) * K_PER",
        "_k_hi = tl.minimum(K, _k_lo + K_PER)",
        "if TMA:",
        *(f"    {line}" for line in _tma_loop(g, dot, precision)),
        "else:",
        *(f"    {line}" for line in pointers),
        "if SPLIT > 1:",
        "    _p_ptrs = (",
        "        part_ptr + ((_pid_b * SPLIT + tl.program_id(2)) * M + _offs_m[:, None].to(tl.int64)) * N",
        "        + _offs_n[None, :]",
        "    )",
        "    tl.store(_p_ptrs, _acc, mask=(_offs_m[:, None] < M) & (_offs_n[None, :] < N))",
        "else:",
    ]
    body += [f"    {line}" for line in _gemm_epilogue(prog)]
    ptrs = [f"{name}_ptr" for name in _operands(g)] + _gemm_args(prog) + ["part_ptr"]
    sizes = ["M", "N", "K", "K_PER", "GROUP", "_sab", "_sam", "_sak", "_sbb", "_sbk", "_sbn"]
    consts = [f"{c}: tl.constexpr" for c in GEMM_CONSTEXPRS]
    return _kernel(name, ptrs + sizes + [*prog.symbols] + consts, body)


def gemm_sum_kernel(prog: Program, name: str) -> str:
    """Split-K's second kernel: per output tile, the SPLIT fp32 partial tiles added in slice
    order (deterministic), then the epilogue."""
    body = _gemm_tile() + [
        "_pmask = (_offs_m[:, None] < M) & (_offs_n[None, :] < N)",
        "_p_ptrs = part_ptr + (_pid_b * SPLIT * M + _offs_m[:, None].to(tl.int64)) * N + _offs_n[None, :]",
        "_acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
        "for _s in range(0, SPLIT):",
        "    _acc += tl.load(_p_ptrs + _s * M * N, mask=_pmask, other=0.0)",
    ]
    body += _gemm_epilogue(prog)
    args = _gemm_args(prog) + ["part_ptr", "M", "N", "GROUP", "SPLIT", *prog.symbols]
    return _kernel(name, args + ["BLOCK_M: tl.constexpr", "BLOCK_N: tl.constexpr"], body)


GEMM_CONSTEXPRS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "WRAP", "EVEN_K", "SPLIT", "TMA", "B_KMAJOR")


def gemm_persistent_kernel(prog: Program, name: str) -> str:
    """The product kernel, persistent (PERSIST, with TMA; no split): NUM_PROGS programs per
    batch, about one per SM, each walking tiles pid, pid + NUM_PROGS, ... in the grouped order
    with the operands' descriptors made once, so one tile's loads overlap the last one's
    epilogue and no wave of programs is left part-empty (FLATTEN: the tile and K loops
    pipelined as one loop). On the H200 (docs/results/gemm_tma_h200.md) this structure read
    nn.Linear's K-major weight at 0.74-0.96 x cuBLAS where one program per tile read it at
    0.61-0.78 x."""
    g = prog.gemm
    assert g is not None
    dot = TL_DTYPES[g.dot_dtype]
    precision = ', input_precision="ieee"' if g.dot_dtype == torch.float32 else ""
    body = ["_pid_b = tl.program_id(1).to(tl.int64)", *_tma_descriptors(g)]
    body += [
        "_n_tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)",
        "for _pid in tl.range(tl.program_id(0), _n_tiles, NUM_PROGS, flatten=FLATTEN):",
        *(f"    {line}" for line in _tile_of_pid()),
        *(f"    {line}" for line in _tma_k_loop(dot, precision, "0", "K")),
        *(f"    {line}" for line in _gemm_epilogue(prog)),
    ]
    ptrs = [f"{name}_ptr" for name in _operands(g)] + _gemm_args(prog)
    sizes = ["M", "N", "K", "NUM_PROGS", "GROUP", "_sab", "_sam", "_sbb", "_sbk", "_sbn"]
    consts = [
        f"{c}: tl.constexpr" for c in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "B_KMAJOR", "FLATTEN")
    ]
    return _kernel(name, ptrs + sizes + [*prog.symbols] + consts, body)


def gemm_launcher(
    prog: Program, kernel: str, summer: str, persistent: str, tunables: dict[str, int]
) -> str:
    """Two configurations: decode (at most GEMM_FIXED's DECODE_ROWS rows of output per batch,
    where one tile row covers M and few programs would run) and prefill. Decode splits K when
    the tiles alone would leave most SMs idle: SPLIT_K 0 doubles the slices (up to 8) while the
    programs stay within SPLIT_TARGET; 1 never splits."""
    g = prog.gemm
    assert g is not None
    params = ", ".join(_params(prog) + [f"{k}: int = {v}" for k, v in tunables.items()])
    body = [f"_opa = {g.a}{g.a_views}", f"_opb = {g.b}{g.b_views}"]
    if "_opa_k" in g.a_views:  # A's leading dims merged into the rows: K is its last dim
        body.insert(0, f"_opa_k = {g.a}.shape[-1]")
    if g.batched:
        body += ["B, M, K = _opa.shape", "N = _opb.shape[2]"]
        strides = ["_opa.stride(0), _opa.stride(1), _opa.stride(2)"]
        strides += ["_opb.stride(0), _opb.stride(1), _opb.stride(2)"]
    else:
        body += ["M, K = _opa.shape", "N = _opb.shape[1]", "B = 1"]
        strides = ["0, _opa.stride(0), _opa.stride(1)", "0, _opb.stride(0), _opb.stride(1)"]
    # the persistent kernel reads through descriptors: no stride along A's K (it is 1)
    strides_persistent = [strides[0].rsplit(", ", 1)[0], strides[1]]
    body += _inputs_ready(prog)
    body += _allocations(prog)
    body += ["if out0.numel() == 0:", f"    return {_returns(prog)}"]
    body += [f"{name} = {expr}" for name, expr in prog.symbols.items()]
    args = (
        _operands(g) + [p.name for p in prog.inputs] + [f"out{i}" for i in range(len(prog.outputs))]
    )
    body += [
        f"if M <= {GEMM_FIXED['DECODE_ROWS']}:",
        "    _bm, _bn, _bk = DECODE_BLOCK_M, DECODE_BLOCK_N, DECODE_BLOCK_K",
        "    _warps, _stages, _group, _wrap = DECODE_WARPS, DECODE_STAGES, 0, 1",
        "    _split = SPLIT_K",
        "    if _split == 0:",
        "        _tiles = triton.cdiv(M, _bm) * triton.cdiv(N, _bn) * B",
        "        _split = 1",
        f"        while _split < 8 and _tiles * _split * 2 <= {GEMM_FIXED['SPLIT_TARGET']}:",
        "            _split *= 2",
        "    _tma, _bkm = 0, 0",
        "else:",
        "    _bm, _bn, _bk = BLOCK_M, BLOCK_N, BLOCK_K",
        "    _warps, _stages, _group, _wrap, _split = num_warps, num_stages, GROUP_M, WRAP, 1",
        # descriptors need a unit stride along the stored last dim and 16-byte aligned
        # bases and other strides; B is read as stored, [N, K] when K is its unit dim
        "    _bkm = int(_opb.stride(-2) == 1 and _opb.stride(-1) != 1)",
        "    _b_unit = _opb.dim() - 2 if _bkm else _opb.dim() - 1",
        "    _tma = TMA and _opa.stride(-1) == 1 and _opb.stride(_b_unit) == 1",
        "    _tma = _tma and _opa.data_ptr() % 16 == 0 and _opb.data_ptr() % 16 == 0",
        "    _tma = _tma and all(s * _opa.element_size() % 16 == 0 for s in _opa.stride()[:-1])",
        "    _tma = _tma and all(",
        "        s * _opb.element_size() % 16 == 0 for i, s in enumerate(_opb.stride()) if i != _b_unit",
        "    )",
        "    _tma = int(bool(_tma))",
        "    if _tma:  # device-side descriptors take their 128 bytes from this allocator",
        "        triton.set_allocator(",
        f"            lambda size, align, stream: torch.empty(size, dtype=torch.int8, device={prog.primary}.device)",
        "        )",
        "_k_per = triton.cdiv(triton.cdiv(K, max(_split, 1)), _bk) * _bk if K > 0 else _bk",
        "_split = max(triton.cdiv(K, _k_per), 1)  # no empty slices",
        "if _group <= 0:",
        "    _group = triton.cdiv(M, _bm)",
        "_part = out0",
        f"if _tma and PERSIST and _split == 1 and M > {GEMM_FIXED['DECODE_ROWS']}:",
        "    _tiles = triton.cdiv(M, _bm) * triton.cdiv(N, _bn)",
        f"    _dev = {prog.primary}.device",
        "    _sms = torch.cuda.get_device_properties(_dev).multi_processor_count if _dev.type == 'cuda' else 4",
        "    _progs = max(1, min(_tiles, _sms // B))",
        f"    {persistent}[(_progs, B)](",
        f"        {', '.join(args)},",
        "        M, N, K, _progs, _group,",
        *(f"        {s}," for s in strides_persistent),
        *(f"        {s}," for s in prog.symbols),
        "        BLOCK_M=_bm, BLOCK_N=_bn, BLOCK_K=_bk, B_KMAJOR=_bkm, FLATTEN=FLATTEN,",
        "        num_warps=_warps, num_stages=_stages,",
        "    )",
        f"    return {_returns(prog)}",
        "if _split > 1:",
        f"    _part = torch.empty((B, _split, M, N), dtype=torch.float32, device={prog.primary}.device)",
        "grid = (triton.cdiv(M, _bm) * triton.cdiv(N, _bn), B, _split)",
        f"{kernel}[grid](",
        f"    {', '.join(args)}, _part,",
        "    M, N, K, _k_per, _group,",
        *(f"    {s}," for s in strides),
        *(f"    {s}," for s in prog.symbols),
        "    BLOCK_M=_bm, BLOCK_N=_bn, BLOCK_K=_bk, WRAP=_wrap,",
        "    EVEN_K=K % _bk == 0 and _k_per % _bk == 0, SPLIT=_split, TMA=_tma, B_KMAJOR=_bkm,",
        "    num_warps=_warps, num_stages=_stages,",
        ")",
        "if _split > 1:",
        f"    {summer}[(triton.cdiv(M, _bm) * triton.cdiv(N, _bn), B)](",
        f"        {', '.join(args[len(_operands(g)) :])}, _part, M, N, _group, _split,",
        *(f"        {s}," for s in prog.symbols),
        "        BLOCK_M=_bm, BLOCK_N=_bn, num_warps=4,",
        "    )",
        f"return {_returns(prog)}",
    ]
    return f"def {prog.entry_point}({params}):\n" + "".join(f"    {line}\n" for line in body)
