"""Rule-based code generation: a task's PyTorch reference, translated into a Triton kernel.

The offline policy's honest, model-free way to write a kernel. It reads only what every method
sees (the task's reference function, its inputs and shapes), never the task's own solution in
knowledge_base/kernels/.

How:
1. Trace the reference into aten ops (`agents.offline.codegen.trace`) with `make_fx` and the
   core-aten decompositions, on inputs for every CPU shape (real inputs, fake tracing: a
   reference that reads tensor values on the host or branches on them fails here), once more
   with other inputs, and at every GPU shape (fake inputs: no memory spent). The op sequence must
   be the same in all traces, and a number in the graph that differs between them must be one
   the launcher can compute (the row length N, the element count n, an input's dim, their
   reciprocals...), else the kernel would be right at one shape only.
2. Classify every tensor against the problem's shape D (`agents.offline.codegen.shapes`: full,
   per-row, per-column, per-batch, scalar, wide) and pick the structure:
   - pointwise: full and scalar tensors, elementwise ops: one flat kernel;
   - row: per-row/per-column/per-batch tensors, slices of a wide input's last dim, reductions
     over the last dim(s): one program per row (one tile, or a loop of tiles for long rows);
   - total: reductions of the whole tensor (losses, norms): partials per block, then one
     program reduces them and finishes;
   - gemm: one matrix multiply (mm, bmm, addmm) whose operands are inputs, possibly through
     permutes, no-op views and casts (the launcher replays the permutes and passes strides; the
     kernel casts at load), then an elementwise epilogue on the product (full, per-row,
     per-column, per-batch and scalar tensors, as in the row structure): one program per
     (BLOCK_M, BLOCK_N) tile (and batch), a K loop of masked loads and tl.dot accumulating in
     fp32 (IEEE products for fp32 operands: the fp32 GEMM tolerances reject TF32).
   Anything else (two matmuls, a prologue op before a matmul, a reduction after one,
   convolution, indexing, scans, data movement, reductions over other dims) raises NotSupported
   with the op or shape that stopped it.
3. Walk the graph (`agents.offline.codegen.builder`) and translate op by op
   (`agents.offline.codegen.ops`), in fp32, rounding where the reference holds a value in
   fp16/bf16/fp8, and write the module (`agents.offline.codegen.emit`, `.source`). The result
   passes the judge's static check, or generate raises NotSupported.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.offline.codegen.builder import Builder
from agents.offline.codegen.ops import NotSupported
from agents.offline.codegen.source import module_source
from agents.offline.codegen.trace import check_ops_known, check_same_ops, trace
from benchmarks import Task, check_task_candidate

__all__ = ["Generated", "NotSupported", "check_ops_known", "check_same_ops", "generate", "trace"]


@dataclass
class Generated:
    """What generate returns: the candidate module and how it was made."""

    source: str  # a complete candidate module (imports torch, triton, triton.language as tl)
    structure: str  # "pointwise", "row", "total" (whole-tensor reductions) or "gemm"
    ops: list[str]  # the aten ops translated, in order (for logs)


def generate(task: Task) -> Generated:
    """A Triton candidate for `task`, translated from its reference. Raises NotSupported."""
    if task.entry_kind != "function":
        raise NotSupported(
            f"task {task.id} has a class entry point ({task.entry_point}); the generator writes functions"
        )
    graphs = trace(task)
    ops = check_same_ops(graphs)
    check_ops_known(ops)
    prog = Builder(task, graphs, ops).build()
    try:
        source = module_source(task, prog)
    except ValueError as exc:  # a statement the kernel's passes cannot schedule
        raise NotSupported(f"the generator could not schedule the kernel: {exc}") from exc
    verdict = check_task_candidate(source, task, filename=f"<generated for {task.id}>")
    if not verdict.ok:
        raise NotSupported(
            f"the generated module fails the static check: {verdict.error_class}: {verdict.message}"
        )
    return Generated(source=source, structure=prog.structure, ops=ops)
