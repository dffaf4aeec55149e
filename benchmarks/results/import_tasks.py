"""The tasks an imported source carries, and its kernels fitted to them.

Other systems publish the problem beside each kernel, so `kernforge import` judges a kernel
against its own problem, not against a kernforge task of a similar name:

- a **GEAK** record (TritonBench-G: `label` is the reference, itself Triton code, `test_code` the
  test calling it) becomes a TritonBench-format file, `label`, a separator line, `test_code`;
- a **KernelAgent** session's `problem.txt` is a KernelBench problem file as it is.

Each is written under `<results folder>/tasks/<format>/<name>.py` (a name taken twice by
different problems gets a hash suffix) and loaded like any task file, so it can be read, listed
(`kernforge tasks list --suite <results folder>/tasks/geak`) and judged again with
`kernforge eval --task`.

The kernels are fitted to the task, and each change is said in the row's origin: KernelAgent's
`kernel_function` is wrapped in the entry point the task expects (a function of the task's
name, or for a KernelBench problem a `ModelNew` built like its `Model`); on the CPU, `"cuda"`
device strings become `"cpu"`. A kernel that asserts it runs on CUDA cannot be judged on the CPU
at all (`needs_cuda`): that is not the method failing, and it is reported as not judged.
"""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

from benchmarks import pyparse
from benchmarks.loading import load_task_file
from benchmarks.task import Task, TaskError

SEPARATOR_LINE = "#" * 80
_CUDA_WORDS = re.compile(r"\bis_cuda\b|['\"]cuda|torch\.cuda\.is_available|\.type\s*==\s*['\"]cuda")


def geak_task_source(label: object, test_code: object) -> str | None:
    """The TritonBench-format file of a GEAK record, or None when it carries no problem."""
    if not (isinstance(label, str) and label.strip() and isinstance(test_code, str)):
        return None
    if not test_code.strip():
        return None
    return f"{label.rstrip()}\n\n{SEPARATOR_LINE}\n\n{test_code.lstrip()}"


class TaskFiles:
    """Task files written under `folder` and loaded once each (by content)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._loaded: dict[str, Task] = {}

    def task(self, name: str, source: str) -> Task:
        """The task of `source`, written as `<name>.py` (or `<name>_<hash>.py` when another
        problem took that name); TaskError when it does not load (and no file is left)."""
        digest = hashlib.sha256(source.encode()).hexdigest()
        if digest in self._loaded:
            return self._loaded[digest]
        self.folder.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"\W", "_", name) or "task"
        path = self.folder / f"{safe}.py"
        if path.is_file() and path.read_text(encoding="utf-8") != source:
            path = self.folder / f"{safe}_{digest[:8]}.py"
        written = not path.is_file()
        if written:
            path.write_text(source, encoding="utf-8")
        try:
            [task] = load_task_file(path)
        except TaskError:
            if written:
                path.unlink()  # the reason is reported; no broken file is left among the tasks
            raise
        self._loaded[digest] = task
        return task


def needs_cuda(code: str) -> str | None:
    """The first assertion of `code` that requires a CUDA device (`assert x.is_cuda`), as
    "line N: <source>", or None."""
    try:
        tree = pyparse.parse(code)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            text = ast.unparse(node.test)
            if _CUDA_WORDS.search(text):
                return f"line {node.lineno}: assert {text}"
    return None


def on_cpu(code: str) -> tuple[str, str]:
    """`code` with "cuda" device strings and `.cuda()` made the CPU's, and a note; unchanged
    (note "") when it names no CUDA device."""
    from benchmarks.formats.devices import to_cpu_source

    if "cuda" not in code:
        return code, ""
    try:
        changed = to_cpu_source(code)
    except SyntaxError:
        return code, ""
    if ast.dump(pyparse.parse(changed)) == ast.dump(pyparse.parse(code)):
        return code, ""
    return changed + "\n", "CUDA devices in the code made the CPU's for the interpreter"


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def model_new_from(code: str, task: Task, alias: str = "kernel_function") -> tuple[str, str]:
    """For a KernelBench task and a kernel exposing `kernel_function` but no `ModelNew`: append
    a `ModelNew` whose `__init__` is the problem's `Model.__init__` (so it holds the same
    parameters) and whose `forward` calls `kernel_function` with its inputs, followed by the
    Model's parameters when `kernel_function` takes more arguments than `forward` has. Returns
    (code, note); unchanged (note "") when there is nothing to adapt."""
    try:
        tree = pyparse.parse(code)
    except SyntaxError:
        return code, ""
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    functions = _functions(tree)
    if task.entry_point in classes or alias not in functions or task.path is None:
        return code, ""
    problem = pyparse.parse(Path(task.path).read_text(encoding="utf-8"))
    model = next(n for n in problem.body if isinstance(n, ast.ClassDef) and n.name == "Model")
    init = next(
        (n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None
    )
    inputs = list(task.signature().parameters)
    kernel_args = functions[alias].args
    wanted = len(kernel_args.posonlyargs) + len(kernel_args.args) - len(kernel_args.defaults)
    weights = wanted > len(inputs)
    call_args = ", ".join([*inputs, *(["*self.parameters()"] if weights else [])])
    init_src = (
        _renamed(ast.unparse(init), "Model", task.entry_point)
        if init is not None
        else "def __init__(self, *args):\n    super().__init__()"
    )
    shim = (
        "\n\nimport torch\nimport torch.nn as nn\n\n\n"
        f"class {task.entry_point}(nn.Module):\n"
        + _indent(init_src)
        + f"\n\n    def forward(self, {', '.join(inputs)}):\n"
        + f"        return {alias}({call_args})\n"
    )
    what = "its inputs, then the Model's parameters in order" if weights else "its inputs"
    note = (
        f"{task.entry_point} added: Model's __init__, and a forward calling {alias}() with {what}"
    )
    return code.rstrip() + "\n" + shim, note


def _renamed(source: str, old: str, new: str) -> str:
    return re.sub(rf"\b{re.escape(old)}\b", new, source)


def _indent(source: str) -> str:
    return "\n".join(("    " + line) if line.strip() else line for line in source.splitlines())
