"""The candidate module the built programs become: its docstring (the reference's ops, the
structure, the numerics, the tunables), KB_META, the helpers, the kernels and launchers (one set
per argument class), the entry point that dispatches between them where one is needed, and for
a KernelBench task `class ModelNew`."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import torch

from agents.offline.codegen import classes as cls
from agents.offline.codegen import conv, emit
from agents.offline.codegen.classes import Key
from agents.offline.codegen.entry import Entry
from benchmarks import Task

POINTWISE_DEFAULTS = {"BLOCK": 1024, "num_warps": 4}
# row programs: rows of at least TILE columns one per program (as before rows shared programs),
# shorter ones TILE // BLOCK_N to a program
ROW_DEFAULTS = {
    "num_warps": 4, "MAX_BLOCK_N": 8192, "TILE": 2048, "DECODE_ROW_WARPS": 8, "DECODE_ROW_BLOCK_N": 8192,
}  # fmt: skip
ROW_TILED_DEFAULTS = {"num_warps": 4, "BLOCK_C": 1024, "TILE": 2048}
# rows read strided (a reduction over a dim before the last, e.g. a column sum): 32 adjacent
# columns per program walked 256 rows at a time, so each load reads 32 contiguous elements of
# 256 rows (one program per column, as before, read one element per 32-byte sector)
ROW_STRIDED_DEFAULTS = {
    "num_warps": 8, "MAX_BLOCK_N": 256, "TILE": 8192, "DECODE_ROW_WARPS": 8, "DECODE_ROW_BLOCK_N": 8192,
}  # fmt: skip


def row_defaults(prog: emit.Program) -> dict[str, int]:
    """A row program's default tunables: by its layout (rows contiguous or strided)."""
    if emit.columns_tiled(prog):
        return ROW_TILED_DEFAULTS
    return ROW_STRIDED_DEFAULTS if prog.inner else ROW_DEFAULTS


# GEMM defaults, from H200 studies of bf16 serving shapes (agents/bench/gemm_study.py;
# docs/results/gemm_variants_h200.md and gemm_tma_h200.md for hand-written variants,
# gemm_generated_h200.md and gemm_generated_persistent_h200.md for this generator's own kernel
# with its tunables set; the old 64x64x32 default ran at 0.29-0.36x cuBLAS):
# - prefill, 16-bit: persistent programs (about one per SM) reading both operands through
#   tensor descriptors (TMA, PERSIST), groups of 8 tile rows. B read N-contiguous (a @ b):
#   128x256x64, 8 warps, 4 stages: 1.06 / 0.97 x cuBLAS on the two prefill shapes (one program
#   per tile, wrapped pointer loads, 3 stages: 0.98 / 0.94). B read K-contiguous (x @ w.T,
#   nn.Linear's weight): 128x128x64, 4 warps, 5 stages: 0.90 / 0.89 / 0.75 x on the 8192-, 4096-
#   and 1000-row shapes (the pointer kernel: 0.81 / 0.84 / 0.70; 128x256 tiles reach 0.96 / 0.93
#   on the first two but 0.61 on the 1000-row tail). All of 2026-12-03.
# - decode (M <= 64): 64x128x64, 4 warps, 4 stages, split-K by tile count: 0.65-1.0x cuBLAS inside
#   a CUDA graph; timed call by call the Python launcher's overhead dominates these shapes.
# fp32 operands (IEEE products, no tensor-core fp16 path) keep the smaller tiles and the pointer
# kernel: 128x256x64 fp32 needs more shared memory than an SM has; its descriptor paths are not
# measured.
GEMM_DEFAULTS = {
    "BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "num_warps": 8, "num_stages": 4,
    "GROUP_M": 8, "WRAP": 1, "TMA": 1, "PERSIST": 1, "FLATTEN": 0,
    "DECODE_BLOCK_M": 64, "DECODE_BLOCK_N": 128, "DECODE_BLOCK_K": 64, "DECODE_WARPS": 4,
    "DECODE_STAGES": 4, "SPLIT_K": 0,
}  # fmt: skip
GEMM_K_MAJOR = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "num_warps": 4, "num_stages": 5}
GEMM_FP32 = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3,
             "DECODE_BLOCK_K": 32, "DECODE_STAGES": 3, "TMA": 0, "PERSIST": 0}  # fmt: skip


def gemm_defaults(prog: emit.Program) -> dict[str, int]:
    """The GEMM's defaults for its operand dtype and B's layout (see GEMM_DEFAULTS)."""
    g = prog.gemm
    assert g is not None
    out = dict(GEMM_DEFAULTS)
    if _k_contiguous(g.b_views):
        out.update(GEMM_K_MAJOR)
    if g.dot_dtype == torch.float32:
        out.update(GEMM_FP32)
    return out


def _k_contiguous(views: str) -> bool:
    """Whether the launcher's view of B transposes a stored operand (w.t(), permute(1, 0),
    transpose(1, 2)): a contiguous input then reads K-contiguous."""
    return any(
        word in views
        for word in (".t()", ".T", ".mT", "permute(1, 0)", "permute(0, 2, 1)", "transpose")
    )


@dataclass
class Built:
    """One argument class's programs: its class and the statements `emit` writes (one
    program, or two stages split at a matrix multiply, run in order)."""

    key: Key
    stages: list[emit.Program]
    launcher: str = ""  # the class's launcher, set by module_source
    # the dispatcher's name of a tunable whose default differs from another class's (set by
    # module_source): the dispatcher passes BLOCK_M=BLOCK_M_c1 to class 1's launcher
    renamed: dict[str, str] = field(default_factory=dict)

    @property
    def structure(self) -> str:
        return ">".join(p.structure for p in self.stages)

    def tunables(self) -> dict[str, int]:
        """The class launcher's tunables and their defaults (every stage's)."""
        out: dict[str, int] = {}
        for prog in self.stages:
            for k, v in _defaults(prog).items():
                if out.setdefault(k, v) != v:
                    raise ValueError(f"tunable {k} has two defaults ({out[k]}, {v})")
        return out


def guarded(entry: Entry, keys: list[Key]) -> bool:
    """Whether the entry point must test a call's class before launching: several classes, or
    arguments other than tensors (a flag, a float, a default) the kernel was traced with, or
    keyword-only parameters (the dispatcher writes them; launchers take every one by position)."""
    if len(keys) > 1 or any(k != v for k, v in entry.launcher_params().items()):
        return True
    if entry.positional < len(entry.params):
        return True
    return any(not cls.is_tensor(k) for k in keys[0]) or bool(entry.defaults())


def launcher_name(entry: Entry, index: int, keys: list[Key]) -> str:
    """The launcher of class `index`: the entry point itself when it needs no dispatch; else
    `_<stem>` (ModelNew's, without dispatch) or `_<stem>_c<index>` (the dispatcher is
    `_<stem>` or the entry point)."""
    if not guarded(entry, keys):
        return entry.name if entry.kind == "function" else f"_{entry.stem}"
    return f"_{entry.stem}_c{index}"


def _kernels(prog: emit.Program, stem: str) -> tuple[list[str], str, dict[str, list[int]], str]:
    """The kernels and launcher of one program (named from `stem`), its tunables and the
    structure's paragraph for the module docstring."""
    if prog.structure == "conv":
        return conv.kernels(prog, stem)
    if prog.structure == "pointwise":
        kernel = f"{stem}_kernel"
        kernels = [emit.pointwise_kernel(prog, kernel)]
        launcher = emit.pointwise_launcher(prog, kernel, POINTWISE_DEFAULTS)
        windows = (
            "\nIndex maps (pads, pools): each output element's offset is decoded into its coordinates,\n"
            "and the source is read at coordinates computed from them by masked loads (a pool's\n"
            "window unrolled); the sizes are computed by the launcher, and those the coordinates are\n"
            "decoded by are constexprs (a division by a constant is a multiply and a shift; by a\n"
            "runtime value it is ~20 instructions an element): one compile per shape."
            if any(p.kind == "window" for p in prog.inputs)
            else ""
        )
        return (
            kernels,
            launcher,
            emit.POINTWISE_TUNABLES,
            (
                "Structure: pointwise. The tensors are flattened; each program handles BLOCK contiguous\n"
                "elements, the last block masked; offsets are int32 unless a tensor has 2**30 elements\n"
                "or more (WIDE)." + windows
            ),
        )
    if prog.structure == "total":
        partial, finish = f"{stem}_partial_kernel", f"{stem}_finish_kernel"
        kernels = emit.total_kernels(prog, partial, finish)
        launcher = emit.total_launcher(prog, partial, finish, POINTWISE_DEFAULTS)
        return (
            kernels,
            launcher,
            emit.POINTWISE_TUNABLES,
            (
                "Structure: total (reductions of the whole tensor). Each program of the first kernel\n"
                "reduces BLOCK elements (the last block masked) to one partial; one program of the\n"
                "second reduces the partials in a fixed order (deterministic) and finishes."
            ),
        )
    if prog.structure == "gemm":
        kernel, summer = f"{stem}_gemm_kernel", f"{stem}_gemm_sum_kernel"
        persistent = f"{stem}_gemm_persistent_kernel"
        kernels = [
            emit.gemm_kernel(prog, kernel),
            emit.gemm_sum_kernel(prog, summer),
            emit.gemm_persistent_kernel(prog, persistent),
        ]
        launcher = emit.gemm_launcher(prog, kernel, summer, persistent, gemm_defaults(prog))
        return (
            kernels,
            launcher,
            emit.GEMM_TUNABLES,
            (
                "Structure: gemm. One program per BLOCK_M x BLOCK_N tile of the product (and per batch\n"
                "for bmm), tiles walked in groups of GROUP_M tile rows (0: column-major); K is walked\n"
                "in BLOCK_K steps, tl.dot accumulating in fp32 (IEEE fp32 products for fp32 operands);\n"
                "loads are masked, or with WRAP wrapped modulo M and N and unmasked when K divides\n"
                "evenly; with TMA (where the operands' strides allow) both are read through Hopper\n"
                "tensor descriptors instead, and with PERSIST about one program per SM walks the tiles\n"
                "(FLATTEN: tile and K loops pipelined as one). Calls with at most 64 rows use the DECODE_* configuration\n"
                "and split K into SPLIT_K slices (0: by tile count) summed in fp32 by a second kernel.\n"
                "The epilogue runs on the accumulator tile, per-row and per-column tensors broadcast\n"
                "over it."
            ),
        )
    one, looped = f"{stem}_row_kernel", f"{stem}_looped_kernel"
    if emit.columns_tiled(prog):
        return (
            [emit.row_kernel(prog, one)],
            emit.tiled_row_launcher(prog, one, ROW_TILED_DEFAULTS),
            emit.ROW_TILED_TUNABLES,
            (
                "Structure: row, columns independent (no reduction or scan). Each program takes\n"
                "BLOCK_N = min(next_power_of_2(N), BLOCK_C) columns of BLOCK_R rows of the last dim\n"
                "(N columns), BLOCK_R = TILE // BLOCK_N (at least 1): a grid of row blocks x column\n"
                "tiles, so a few long rows still fill the GPU and many short ones share programs."
            ),
        )
    kernels = [emit.row_kernel(prog, one), emit.looped_row_kernel(prog, looped)]
    launcher = emit.row_launcher(prog, one, looped, row_defaults(prog))
    strided = (
        "\nThe reduction runs over a dim before the last: a row's elements lie `inner` apart\n"
        "(the numel of the dims after it), and row r starts at (r // inner) * N * inner + r % inner:\n"
        "a program's BLOCK_R rows are adjacent in memory, so its tiles are read contiguously\n"
        "down the rows (small MAX_BLOCK_N, large TILE)."
        if prog.inner
        else ""
    )
    scanned = (
        "\nScans (cumsum/cumprod) run along the tile with tl.cumsum/tl.cumprod, identity in the\n"
        "masked lanes; in the looped kernel each carries the sum/product of the tiles before it."
        if any(s.scan for s in prog.stmts)
        else ""
    )
    arg = (
        "\nArg-reductions reduce (value, index) pairs with tl.reduce, keeping torch's choice (the\n"
        "first index among equal values, a NaN beyond every number); in the looped kernel each\n"
        "lane keeps its best pair across the tiles."
        if any(s.reduce in emit.ARG_REDUCES for s in prog.stmts)
        else ""
    )
    return (
        kernels,
        launcher,
        emit.ROW_TUNABLES,
        (
            "Structure: row. Each program takes BLOCK_R rows of the last dim (N columns) as a\n"
            "[BLOCK_R, BLOCK_N] tile, BLOCK_R = TILE // BLOCK_N (at least 1). Rows that fit in\n"
            "MAX_BLOCK_N columns are one tile of next_power_of_2(N) columns; reductions run along\n"
            "the tile's rows with their identity in the masked lanes. Longer rows are walked in\n"
            "tiles of MAX_BLOCK_N columns: one pass per reduction, one to store. A call with at\n"
            "most DECODE_ROWS rows (fewer than the GPU's SMs) takes one row per program, with\n"
            "DECODE_ROW_WARPS warps and DECODE_ROW_BLOCK_N in place of num_warps and MAX_BLOCK_N."
            + strided
            + scanned
            + arg
        ),
    )


def _defaults(prog: emit.Program) -> dict[str, int]:
    if prog.structure == "conv":
        return conv.CONV_DEFAULTS
    if prog.structure == "gemm":
        return gemm_defaults(prog)
    if prog.structure == "row":
        return row_defaults(prog)
    return {"pointwise": POINTWISE_DEFAULTS, "total": POINTWISE_DEFAULTS}.get(
        prog.structure, ROW_DEFAULTS
    )


def module_source(task: Task, entry: Entry, built: list[Built]) -> str:
    """The candidate module: kernels and launchers per argument class, the dispatching entry
    point where one is needed, and for a class task `class ModelNew`."""
    keys = [b.key for b in built]
    names = entry.arguments
    dispatch = guarded(entry, keys)
    parts: list[str] = []
    helpers: set[str] = set()
    tunables: dict[str, list[int]] = {}
    defaults: dict[str, int] = {}
    docs: list[str] = []
    for i, b in enumerate(built):
        b.launcher = launcher_name(entry, i, keys)
        entry_defaults = entry.defaults() if not dispatch and entry.kind == "function" else {}
        stem = f"_{entry.stem}" + (f"_c{i}" if dispatch else "")
        for j, prog in enumerate(b.stages):
            staged = len(b.stages) > 1
            prog.entry_point = f"{b.launcher}_s{j}" if staged else b.launcher
            prog.defaults = {} if staged else entry_defaults
            kernels, launcher, space, shape_doc = _kernels(
                prog, stem + (f"_s{j}" if staged else "")
            )
            parts += [*kernels, launcher]
            helpers |= prog.helpers
            for k, v in space.items():
                tunables.setdefault(k, list(v))
            ops = f"Reference ops (aten, in order): {', '.join(prog.ops)}."
            if staged:
                ops = f"Stage {j + 1} of {len(b.stages)}: " + ops
            if j == 0 and (len(built) > 1 or dispatch):
                ops = f"Class {i} ({cls.describe(entry.names, b.key) or 'no arguments'}): " + ops
            docs.append(f"{textwrap.fill(ops, 96)}\n{shape_doc}")
        for k, v in b.tunables().items():
            if defaults.setdefault(k, v) == v:
                continue
            if not dispatch:
                raise ValueError(f"tunable {k} has two defaults ({defaults[k]}, {v})")
            # classes whose defaults differ (an fp32 GEMM's tiles beside a bf16 one's): the
            # class gets a tunable of its own, which the dispatcher passes as the class's k
            own = f"{k}_c{i}"
            defaults[own] = v
            b.renamed[k] = own
            tunables[own] = list(tunables.get(k, [v]))
        if len(b.stages) > 1:
            parts.append(_staged_launcher(b, names, entry_defaults))
    structures = list(dict.fromkeys(b.structure for b in built))
    if dispatch:
        parts.append(_dispatcher(entry, built, names, defaults))
    if entry.kind == "class":
        parts.append(_model_new(entry, built, names, defaults, dispatch))
    meta = {
        "tunables": tunables,
        "generated_by": "agents/offline/codegen/translate.py",
        "structure": "+".join(structures),
    }
    dispatch_doc = (
        "Dispatch: one kernel per class of arguments traced (tensor ranks and dtypes, the other\n"
        "arguments' values; float arguments are kernel arguments); a call of another class raises.\n"
        if dispatch
        else ""
    )
    class_doc = (
        "Entry point: class ModelNew, with Model's own __init__ (so the same parameters and\n"
        "buffers); its forward passes the inputs and the weights it holds to the launcher.\n"
        if entry.kind == "class"
        else ""
    )
    doc = (
        f'"""{task.id}: generated from the task\'s PyTorch reference by agents/offline/codegen/translate.py.\n\n'
        + "\n".join(docs)
        + "\n"
        + dispatch_doc
        + class_doc
        + "Numerics: fp32 inside the kernel; values the reference holds in fp16/bf16/fp8 are rounded\n"
        "where it rounds them; one cast to the output dtype on store.\n"
        f"Tunables: {', '.join(tunables)}.\n"
        '"""\n'
    )
    imports = ["import torch", "import triton", "import triton.language as tl"]
    imports += [line for line in entry.init_needs if line not in imports]
    head = f"{doc}\n" + "\n".join(imports) + f"\n\nKB_META = {meta!r}\n"
    parts = [head, *emit.helper_sources(helpers), *parts]
    return "\n\n".join(p.rstrip("\n") + "\n" for p in parts)


_STAGE_DOC = {
    "conv": "Stage 1 runs the convolutions; stage 2 the ops after them, reading the result.",
    "gemm": "Stage 1 writes the matrix product; stage 2 computes the rest from it.",
    "row": "Stage 1 writes one value per row; stage 2 reduces them to the result.",
    "total": "Stage 1 reduces the whole tensor to one value; stage 2 computes the rest, reading it.",
}


def _staged_launcher(b: Built, names: list[str], defaults: dict[str, str]) -> str:
    """A class's launcher that runs its stages in order, each passing its output on."""
    params = [f"{p}={defaults[p]}" if p in defaults else p for p in names]
    first, second = b.stages
    product = second.params[-1]
    lines = [
        f"def {b.launcher}({', '.join(params + _tunable_params(b.tunables()))}):",
        f'    """{_STAGE_DOC[first.structure]}"""',
        f"    {product} = {_call(first.entry_point, names, list(_defaults(first)))}",
        f"    return {_call(second.entry_point, [*names, product], list(_defaults(second)))}",
    ]
    return "\n".join(lines) + "\n"


def _tunable_params(defaults: dict[str, int]) -> list[str]:
    return [f"{k}: int = {v}" for k, v in defaults.items()]


def _call(name: str, args: list[str], tunables: list[str]) -> str:
    return f"{name}({', '.join(args + [f'{k}={k}' for k in tunables])})"


def _dispatcher(
    entry: Entry, built: list[Built], names: list[str], defaults: dict[str, int]
) -> str:
    """The entry point (or ModelNew's launcher) that tests a call's class and launches its kernels."""
    keys = [b.key for b in built]
    if entry.kind == "function":
        name = entry.name
        params = entry.parameter_list()
    else:
        name = f"_{entry.stem}"
        params = list(names)
    lines = [
        f"def {name}({', '.join(params + _tunable_params(defaults))}):",
        '    """Launch the kernels generated for the call\'s class of arguments."""',
    ]
    for b in built:
        test = cls.class_test(entry.names, b.key, keys)
        own = [f"{k}={b.renamed.get(k, k)}" for k in b.tunables()]
        lines += [f"    if {test}:", f"        return {b.launcher}({', '.join(names + own)})"]
    lines += [
        "    raise NotImplementedError(",
        f'        "{entry.name}: no kernel was generated for this class of arguments (tensor ranks '
        "and dtypes, other arguments' values); the module docstring lists the classes traced\"",
        "    )",
    ]
    return "\n".join(lines) + "\n"


def _model_new(
    entry: Entry, built: list[Built], names: list[str], defaults: dict[str, int], dispatch: bool
) -> str:
    """class ModelNew: Model's own __init__ and a forward that calls the launcher."""
    params = [f"{p}={d}" if (d := entry.defaults().get(p)) else p for p in entry.names]
    target = f"_{entry.stem}" if dispatch else built[0].launcher
    own = list(defaults) if dispatch else list(built[0].tunables())
    args = entry.names + [w.accessor for w in entry.weights]
    lines = [
        "class ModelNew(nn.Module):",
        '    """Model\'s parameters and buffers (its own __init__); forward runs the generated kernels."""',
        "",
        entry.init_source.rstrip("\n"),
        "",
        f"    def forward(self, {', '.join(params + _tunable_params(defaults))}):",
        f"        return {_call(target, args, own)}",
    ]
    return "\n".join(lines) + "\n"
