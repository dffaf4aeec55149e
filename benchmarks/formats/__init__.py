"""Problem files of other benchmarks, judged as kernforge tasks (docs/formats.md).

    kernelbench   KernelBench: class Model(nn.Module), get_inputs(), get_init_inputs();
                  the candidate defines class ModelNew
    tritonbench   TritonBench-T / KernelBench-X: reference function(s), a line of '#', test
                  function(s) calling the reference; the candidate defines the same function

`benchmarks.loading.load_task_file` (and so `get_task`, the worker and every CLI command that takes
a task file) detects the format here and hands such files to `load_external`; each becomes one
Task subclass (`benchmarks.formats.common.ExternalTask`) that the judge runs unchanged.

The other modules, one job each: `shrink` (the integers that size a problem, rewritten),
`cpu_sizes` (the sizes the CPU interpreter runs, probed, or a refusal), `checks` (flags and input
modes learnt by running the reference), `suite_imports` (a suite's own helper modules, found and
staged with the file), `devices` (files written for CUDA, rewritten for the CPU), `common`.
"""

from __future__ import annotations

import ast
from pathlib import Path

from benchmarks import pyparse
from benchmarks.task import Task, TaskError

FORMATS: tuple[str, ...] = ("native", "kernelbench", "tritonbench")
_NATIVE_MARKERS = {"NAME", "ENTRY_POINT"}
_KERNELBENCH_MARKERS = {"Model", "get_inputs", "get_init_inputs"}


def detect_format(path: Path | str) -> str:
    """The file's format ("native", "kernelbench" or "tritonbench") from its top-level names.
    A file that does not parse, or matches nothing, is "native": its loader says what is wrong."""
    from benchmarks.formats.tritonbench import SEPARATOR

    text = Path(path).read_text()
    try:
        tree = pyparse.parse(text)
    except (SyntaxError, ValueError):
        return "native"
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    if names & _NATIVE_MARKERS:
        return "native"
    if names & _KERNELBENCH_MARKERS:
        return "kernelbench"
    if SEPARATOR.search(text) or any(n.startswith("test") for n in names):
        return "tritonbench"
    return "native"


def load_external(path: Path | str, fmt: str | None = None) -> list[Task]:
    """The tasks of a KernelBench or TritonBench file (one each); TaskError when malformed."""
    from benchmarks.formats import kernelbench, tritonbench

    path = Path(path).resolve()
    fmt = fmt or detect_format(path)
    loaders = {"kernelbench": kernelbench.load, "tritonbench": tritonbench.load}
    if fmt not in loaders:
        raise TaskError(
            path, "<file>", f"not a KernelBench or TritonBench problem file (format {fmt})"
        )
    return list(loaders[fmt](path))
