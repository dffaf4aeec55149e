"""The candidate module a built program becomes: its docstring (the reference's ops, the
structure, the numerics, the tunables), KB_META, the helpers, the kernels and the launcher."""

from __future__ import annotations

import textwrap

from agents.offline.codegen import emit
from benchmarks import Task

POINTWISE_DEFAULTS = {"BLOCK": 1024, "num_warps": 4}
ROW_DEFAULTS = {"num_warps": 4, "MAX_BLOCK_N": 8192}
GEMM_DEFAULTS = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}


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
        "generated_by": "agents/offline/codegen/translate.py",
        "structure": prog.structure,
    }
    doc = (
        f'"""{task.id}: generated from the task\'s PyTorch reference by agents/offline/codegen/translate.py.\n\n'
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
