"""The candidate's entry point as the task's format fixes it, and the values the reference is
traced with.

Two kinds (`Task.entry_kind`):
- function: a function named like the reference, taking its positional parameters, defaults
  kept (a TritonBench call may leave trailing ones out, so the trace binds the defaults), then
  its keyword-only ones after `*` (`def sub(input, other, *, alpha=1, out=None)`: the judge passes
  them by keyword, and the trace calls the reference with them by keyword);
- class: KernelBench's `class ModelNew(nn.Module)`. Its `__init__` is Model's own (the judge builds
  both from get_init_inputs() after one seed and copies Model's state into ModelNew, strictly by
  name and shape, so ModelNew must create exactly Model's parameters and buffers); its `forward`
  takes Model.forward's parameters and passes them, with the weights it holds, to the generated
  launcher. The reference is traced as a function of the forward's tensors *and* the weights
  (`torch.func.functional_call`), so the weights are kernel inputs like any other.

A call's arguments are bound to the parameters (defaults filling the gaps) and split into the
tensors (graph inputs) and the other values, which the trace closes over. What the other values
and the tensors' ranks and dtypes are is the call's *class* (`classes.Key`): calls of one class
are traced into one kernel; the launcher dispatches on it (see `agents.offline.codegen.classes`).
Keyword-only arguments take part in the class like positional ones.

A function task's call may write into its arguments (an `out=` buffer, an input changed in place,
optimizer state: `Task.output_args`). `call_values` says which parameters (`Bound.writes`); the
trace turns the writes into values, the kernels compute them and store them into the caller's
buffers (which must be contiguous), and the entry point returns what the reference returns (its
own result, the buffer it wrote, or None). A class task's call passes neither keywords nor
buffers: the judge calls its forward positionally and its inputs are read-only; a Model that
updates its own buffers (batch norm's running statistics) has those writes traced the same way
(`trace`), the kernels storing into the buffers ModelNew holds.
"""

from __future__ import annotations

import ast
import inspect
import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from agents.offline.codegen.emit import launcher_safe
from agents.offline.codegen.ops import NotSupported
from benchmarks import Task, parse_python

EMPTY = inspect.Parameter.empty


@dataclass(frozen=True)
class Weight:
    """A parameter or buffer of a class task's Model: its state_dict name and the launcher
    argument that carries it."""

    state: str  # "linear.weight"
    arg: str  # "linear_weight"
    buffer: bool

    @property
    def accessor(self) -> str:
        """How ModelNew.forward reads it."""
        method = "get_buffer" if self.buffer else "get_parameter"
        return f"self.{method}({self.state!r})"


@dataclass
class Entry:
    """The entry point: its kind, its call parameters (with defaults), and for a class task the
    Model's weights and the source of ModelNew's __init__."""

    kind: str  # "function" | "class"
    name: str  # the task's entry point (the function's name, or "ModelNew")
    # call parameters, in order, defaults kept: the positional ones, then (function tasks) the
    # keyword-only ones (`inspect.Parameter.kind` says which)
    params: list[inspect.Parameter]
    weights: list[Weight] = field(default_factory=list)
    init_source: str = ""  # class: ModelNew's __init__ (Model's own), indented for the class
    init_needs: list[str] = field(default_factory=list)  # class: module-level lines it reads

    @property
    def stem(self) -> str:
        """The base of the generated kernels' and launchers' names."""
        if self.kind == "class":
            return "model_new"
        return self.name.lstrip("_")

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.params]

    @property
    def positional(self) -> int:
        """How many of `params` are positional (the keyword-only ones follow them)."""
        return sum(1 for p in self.params if p.kind != p.KEYWORD_ONLY)

    def split(self, values: list[Any]) -> tuple[list[Any], dict[str, Any]]:
        """Bound values (one per parameter) as the reference is called: (by position, by
        keyword)."""
        n = self.positional
        return list(values[:n]), dict(zip(self.names[n:], values[n:], strict=True))

    def parameter_list(self) -> list[str]:
        """The entry point's parameters as source text: defaults written, keyword-only ones
        after a `*`."""
        defaults = self.defaults()
        out = []
        for p in self.params:
            if p.kind == p.KEYWORD_ONLY and "*" not in out:
                out.append("*")
            out.append(f"{p.name}={defaults[p.name]}" if p.name in defaults else p.name)
        return out

    @property
    def arguments(self) -> list[str]:
        """What the entry point passes to a launcher: its parameters, then the weights."""
        return self.names + [w.arg for w in self.weights]

    def launcher_params(self) -> dict[str, str]:
        """Each argument's name in the launchers (renamed where a launcher uses the name)."""
        return {name: launcher_safe(name) for name in self.arguments}

    def defaults(self) -> dict[str, str]:
        """Source text of each parameter's default (a literal, a dtype or None)."""
        return {p.name: default_source(p) for p in self.params if p.default is not EMPTY}


def default_source(p: inspect.Parameter) -> str:
    value = p.default
    if isinstance(value, torch.dtype):
        return str(value)
    text = repr(value)
    try:
        ok = ast.literal_eval(text) == value
    except (ValueError, SyntaxError):
        ok = False
    if not ok:
        raise NotSupported(
            f"parameter {p.name} has the default {text[:60]}, which the generated entry point "
            "cannot write as a literal"
        )
    return text


def entry_of(task: Task) -> Entry:
    """The entry point of `task`'s candidate: the positional parameters of `task.signature()`
    (Model.forward's without self for a class task; for a TritonBench task, the reference
    function's own names and defaults, as far as the recorded calls fill them), then for a
    function task the reference's keyword-only parameters whose defaults can be written (a
    call that passes another is refused when traced, `call_values`). Raises NotSupported for
    *args and for positional defaults that cannot be written as literals."""
    sig = task.signature()
    params = []
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            raise NotSupported(
                f"the reference takes *{p.name}; the generator needs named parameters"
            )
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            params.append(p)
    for p in params:
        if p.default is not EMPTY:
            default_source(p)
    if task.entry_kind == "function":
        for p in inspect.signature(task.entry_reference()).parameters.values():
            if p.kind == p.KEYWORD_ONLY and _writable(p):
                params.append(p)
    entry = Entry(kind=task.entry_kind, name=task.entry_point, params=params)
    if entry.kind == "class":
        entry.init_source, entry.init_needs = init_source(task)
    return entry


def _writable(p: inspect.Parameter) -> bool:
    """Whether the generated entry point can write the parameter's default (or it has none)."""
    if p.default is EMPTY:
        return True
    try:
        default_source(p)
    except NotSupported:
        return False
    return True


@dataclass(frozen=True)
class Bound:
    """A call bound to the entry point: one value per parameter, and the positions (in
    `Entry.params`) of the arguments the reference writes into, in the call's order."""

    values: list[Any]
    writes: tuple[int, ...] = ()


def call_values(task: Task, entry: Entry, dims: dict[str, int], inputs: tuple[Any, ...]) -> Bound:
    """The inputs made for `dims` bound to the entry point's parameters, as the judge passes
    them (`Task.entry_call`: keyword-only ones by keyword), and the arguments the reference
    writes into (`Task.output_args`). NotSupported for a class task's keywords or buffers, a
    keyword the entry point does not take, and a written buffer that is not a contiguous
    tensor (the kernels store into it flat)."""
    positional, keywords = task.entry_call(dims, inputs)
    flat_writes = task.output_args(dims)
    if entry.kind == "class" and (keywords or flat_writes):
        raise NotSupported(
            "a call of ModelNew.forward passes keywords or output buffers; the generated "
            "forward takes its inputs by position and writes new tensors"
        )
    kw_names = entry.names[entry.positional :]
    unknown = [k for k in keywords if k not in kw_names]
    if unknown:
        raise NotSupported(
            f"a call passes {', '.join(unknown)} by keyword, which the generated entry point "
            "does not take (**kwargs, or a keyword-only parameter whose default it cannot write)"
        )
    values = bind(entry, positional)
    for p in entry.params[entry.positional :]:
        if p.name in keywords:
            values.append(keywords[p.name])
        elif p.default is EMPTY:
            raise NotSupported(f"a call leaves out parameter {p.name}, which has no default")
        else:
            values.append(p.default)
    flat_names = [entry.names[i] for i in range(len(positional))] + list(keywords)
    writes = tuple(entry.names.index(flat_names[i]) for i in flat_writes)
    for i in writes:
        buffer = values[i]
        if not isinstance(buffer, torch.Tensor) or not buffer.is_contiguous():
            raise NotSupported(
                f"a call passes {entry.names[i]}, a buffer the reference writes into, that is not "
                "a contiguous tensor; the generated kernels store into contiguous buffers only"
            )
    return Bound(values, writes)


def bind(entry: Entry, args: tuple[Any, ...]) -> list[Any]:
    """A call's positional arguments with the defaults filling the positional parameters left
    out."""
    n = entry.positional
    if len(args) > n:
        raise NotSupported(f"a call passes {len(args)} arguments to a reference of {n} parameters")
    values = list(args)
    for p in entry.params[len(args) : n]:
        if p.default is EMPTY:
            raise NotSupported(f"a call leaves out parameter {p.name}, which has no default")
        values.append(p.default)
    return values


# -- class tasks -------------------------------------------------------------------------------


def model_at(task: Task, dims: dict[str, int], fake: bool) -> torch.nn.Module:
    """The task's Model at `dims`: the judge's own CPU instance, or (fake) one built on the meta
    device, which holds the weights' names and shapes and no memory."""
    if not fake:
        return task.model(dims, "cpu")  # type: ignore[attr-defined]
    with torch.device("meta"):
        return task.build(task.variant(dims).Model, dims)  # type: ignore[attr-defined]


def weights_of(model: torch.nn.Module, taken: set[str]) -> list[tuple[Weight, torch.Tensor]]:
    """The model's parameters, then its buffers, as the judge's state_dict sees them."""
    out = []
    names = set(taken)
    for buffer, items in ((False, model.named_parameters()), (True, model.named_buffers())):
        for state, tensor in items:
            arg = re.sub(r"\W", "_", state)
            while arg in names or keyword.iskeyword(arg):
                arg += "_"
            names.add(arg)
            out.append((Weight(state, arg, buffer), tensor))
    return out


def class_reference(
    model: torch.nn.Module, weights: list[Weight], n_inputs: int
) -> Callable[..., Any]:
    """Model.forward as a function of (forward's tensors..., weights...)."""
    from torch.func import functional_call

    def reference(*flat: Any) -> Any:
        state = {w.state: t for w, t in zip(weights, flat[n_inputs:], strict=True)}
        return functional_call(model, state, tuple(flat[:n_inputs]))

    return reference


class _SuperCall(ast.NodeTransformer):
    """`super(Model, self)` -> `super()`: the __init__ now sits in class ModelNew."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super" and node.args:
            node.args = []
        return node


def _tensor_method(name: str) -> bool:
    """A name torch.Tensor has a method of: `self.matmul = nn.Linear(...)` would read to the
    static check like the Tensor method, so ModelNew registers such attributes by name."""
    return callable(getattr(torch.Tensor, name, None))


class _RegisterByName(ast.NodeTransformer):
    """`self.<tensor method name> = value` -> `self.add_module("name", value)` (a submodule) or
    `self.register_parameter("name", value)`; other values are kept under `self._name` (they
    are not state, and the traced kernel does not read them)."""

    def __init__(self, kinds: dict[str, str]) -> None:
        self.kinds = kinds

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        target = node.targets[0] if len(node.targets) == 1 else None
        if not (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
            and _tensor_method(target.attr)
        ):
            return node
        kind = self.kinds.get(target.attr, "other")
        if kind == "other":
            target.attr = "_" + target.attr
            return node
        method = "add_module" if kind == "module" else "register_parameter"
        call = ast.Call(
            func=ast.Attribute(value=ast.Name("self", ast.Load()), attr=method, ctx=ast.Load()),
            args=[ast.Constant(target.attr), node.value],
            keywords=[],
        )
        return ast.copy_location(ast.Expr(call), node)


def _attribute_kinds(task: Task) -> dict[str, str]:
    """What each attribute of the task's Model (built on the meta device) is."""
    try:
        model = model_at(task, dict(task.shapes[0].dims), fake=True)
    except Exception:  # noqa: BLE001 - a Model the meta device cannot build: read no kinds
        return {}
    kinds = {}
    for name, value in vars(model).get("_modules", {}).items():
        kinds[name] = "module" if value is not None else "other"
    for name in vars(model).get("_parameters", {}):
        kinds[name] = "parameter"
    return kinds


def init_source(task: Task) -> tuple[str, list[str]]:
    """Model.__init__ as ModelNew's (indented one level), and the module-level imports and
    assignments it reads, in file order. NotSupported when Model has no __init__ of its own or
    reads module-level functions or classes (they would have to be copied with their compute)."""
    text = task.path.read_text()
    tree = parse_python(text)
    model = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == "Model"), None)
    if model is None:
        raise NotSupported("the task file defines no class Model")
    init = next(
        (s for s in model.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
    )
    if init is None:
        return "    def __init__(self):\n        super().__init__()\n", ["import torch.nn as nn"]
    init = _SuperCall().visit(parse_python(ast.unparse(init)).body[0])
    init = _RegisterByName(_attribute_kinds(task)).visit(init)
    ast.fix_missing_locations(init)
    clashing = sorted(
        {
            n.attr
            for n in ast.walk(init)
            if isinstance(n, ast.Attribute)
            and isinstance(n.ctx, ast.Load)
            and isinstance(n.value, ast.Name)
            and n.value.id == "self"
            and _tensor_method(n.attr)
        }
    )
    if clashing:
        raise NotSupported(
            f"Model.__init__ reads self.{clashing[0]}, a name the static check reads as the "
            "Tensor method"
        )
    body = ast.unparse(init)
    local = {a.arg for a in ast.walk(init.args) if isinstance(a, ast.arg)}
    local |= {
        n.id for n in ast.walk(init) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    read = {
        n.id
        for n in ast.walk(init)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local
    }
    needs: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            bound = {(a.asname or a.name).split(".")[0] for a in stmt.names}
            if bound & read:
                needs.append(ast.unparse(stmt))
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)} & read
            sizes = names & set(task.shapes[0].dims)
            if sizes:
                raise NotSupported(
                    f"Model.__init__ reads the size constant {sorted(sizes)[0]} of the task file "
                    "directly (not through get_init_inputs); the judge changes it per shape"
                )
            if names:
                needs.append(ast.unparse(stmt))
        elif isinstance(stmt, ast.FunctionDef | ast.ClassDef) and stmt.name in read:
            raise NotSupported(
                f"Model.__init__ uses {stmt.name}, defined in the task file; ModelNew would have "
                "to copy it"
            )
    if not any(re.search(r"\bnn\b", n) for n in needs):
        needs.insert(0, "import torch.nn as nn")
    indented = "".join(f"    {line}\n" if line else "\n" for line in body.splitlines())
    return indented, needs


def wrapper_head(task: Task) -> str | None:
    """For a class task whose Model holds no parameters or buffers: the start of a ModelNew that
    wraps a function-style kernel (imports, the class line, Model's own __init__), to which the
    caller adds a forward. None for function tasks and for Models with weights (a kernel
    written for a function cannot know them)."""
    if task.entry_kind != "class":
        return None
    try:
        model = model_at(task, dict(task.shapes[0].dims), fake=True)
        init, needs = init_source(task)
    except NotSupported:
        return None
    except Exception:  # noqa: BLE001 - a Model the meta device cannot build: no wrapper
        return None
    if any(True for _ in model.parameters()) or any(True for _ in model.buffers()):
        return None
    lines = [*needs, "", "", "class ModelNew(nn.Module):"]
    lines += [
        '    """The task\'s entry point: Model\'s own __init__, forward through the kernel."""',
        "",
    ]
    return "\n".join(lines) + "\n" + init


def entry_defaults(task: Task) -> dict[str, str]:
    """The source text of the defaults of the task's entry-point parameters that have one and
    can be written (a wrapper keeps them, so calls that leave them out still bind)."""
    out = {}
    for p in task.signature().parameters.values():
        if p.default is EMPTY:
            continue
        try:
            out[p.name] = default_source(p)
        except NotSupported:
            continue
    return out
