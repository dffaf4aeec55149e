"""The forbidden-API walk: an AST visitor that lists every use of a forbidden API in a
candidate (imports, torch names, tensor compute methods, dynamic access, snooping,
monkeypatching, dispatcher hooks), each with its line and the reason it is refused."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

from benchmarks.harness.static_check.facts import ModuleFacts, chain
from benchmarks.harness.static_check.formats import format_fields
from benchmarks.harness.static_check.library import (
    allowed_in_class_entry,
    is_module_name,
    library_name,
    tensor_compute_methods,
)
from benchmarks.harness.static_check.rules import (
    ALLOWED_IMPORT_ROOTS,
    BIND_HOOKS,
    BIND_METHOD_DEFS,
    DANGEROUS_MODULE_NAMES,
    DUNDER_ATTRS_ALLOWED,
    DUNDER_NAMES_ALLOWED,
    DUNDER_STRINGS_ALLOWED,
    DYNAMIC_ATTR_BUILTINS,
    FORBIDDEN_BUILTINS,
    FORBIDDEN_GROUPS,
    FORBIDDEN_METHOD_DEFS,
    FORMAT_METHODS,
    FRAME_ATTRS,
    GLOBAL_FORBIDDEN,
    NN_HOLDERS,
    OS_FACILITY_NAMES,
    TORCH_ALLOWED,
    TORCH_MODULES_ALLOWED,
    why_import,
)


@dataclass(frozen=True)
class Violation:
    """One use of a forbidden API: where it is, how the source wrote it, and why it is refused."""

    line: int
    col: int
    api: str
    why: str

    def render(self) -> str:
        return f"line {self.line}: `{self.api}` -- {self.why}"


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _spelled(node: ast.AST, dotteds: set[str]) -> str:
    """How the source wrote a name, with what it resolves to when that differs."""
    written = ".".join(chain(node) or [])
    meant = "/".join(sorted(d for d in dotteds if d != written))
    return f"{written} ({meant})" if meant else written


class ForbiddenApiWalker(ast.NodeVisitor):
    """Visits a candidate's tree once and collects a Violation for every forbidden use; it tracks
    whether it is inside a ``@triton.jit`` body (where tensor methods and ``@`` are Triton's) or a
    class's ``__init__`` (where a class entry may build its layers), and which parameter names
    shadow builtins."""

    def __init__(
        self, facts: ModuleFacts, forbidden: tuple[str, ...], class_entry: bool = False
    ) -> None:
        self.facts = facts
        self.class_entry = class_entry  # the entry point is an nn.Module class (ModelNew)
        self.init_ids: set[int] = set()  # __init__ methods of classes
        self.init_depth = 0
        self.method_ids: set[int] = set()  # functions defined in a class body
        self.method_depth = 0  # inside one (its `self` is an instance of the candidate's class)
        self.forbidden = tuple(dict.fromkeys((*GLOBAL_FORBIDDEN, *forbidden)))
        self.task_methods = frozenset(
            f.split(".")[2]
            for f in forbidden
            if f.startswith("torch.Tensor.") and f.count(".") == 2
        )
        self.violations: list[Violation] = []
        self.jit_depth = 0
        self.call_funcs: set[int] = set()  # Name nodes in call position (getattr(...))
        self.module_values_ok: set[int] = set()  # hasattr(torch, "x"): a module as a value
        self.format_calls_ok: set[int] = set()  # .format of a constant format string, checked
        # Parameter names in scope: a parameter called `input` or `compile` is not the builtin.
        # Python decides scope statically, so a parameter can never name the builtin (unless a
        # nested function declares it global, which _enter removes again).
        self.scopes: list[frozenset[str]] = [frozenset()]

    # -- reporting --------------------------------------------------------------------------
    def _flag(self, node: ast.AST, api: str, why: str) -> None:
        line = getattr(node, "lineno", 0)
        col = getattr(node, "col_offset", 0) + 1
        self.violations.append(Violation(line, col, api, why))

    # -- dotted names (rooted at an import) -------------------------------------------------
    def _why_forbidden_dotted(self, dotted: str, depth: int = 0) -> str | None:
        if self.class_entry and allowed_in_class_entry(dotted, self.init_depth > 0):
            return None
        for f in self.forbidden:
            if dotted == f or dotted.startswith(f + "."):
                for why, names in FORBIDDEN_GROUPS.items():
                    if f in names:
                        return f"{why} ({f})" if f != dotted else why
                return f"forbidden by the task ({f})"
        parts = dotted.split(".")
        if parts[0] not in ALLOWED_IMPORT_ROOTS:
            return f"module {parts[0]} is not importable by a candidate"
        for p in parts[1:]:
            if _is_dunder(p):
                if p not in DUNDER_ATTRS_ALLOWED:
                    return f"dunder attribute {p} reaches interpreter internals"
            elif p.startswith("_"):
                return "private API"
            elif p in DANGEROUS_MODULE_NAMES:
                return f"reaches module {p}, which a candidate may not use"
        if parts[0] == "torch":
            why = self._why_torch(dotted)
            if why:
                return why
        found = library_name(dotted)
        if found.problem:
            return f"reaches what a candidate may not use: {found.problem}"
        # a re-export: the rules apply to what the name really is
        for real in (found.canonical, found.object_name):
            if real and real != dotted and depth < 3:
                why = self._why_forbidden_dotted(real, depth + 1)
                if why:
                    return f"{why}; `{dotted}` is {real}"
        return None

    def _why_torch(self, dotted: str) -> str | None:
        if dotted in TORCH_MODULES_ALLOWED:
            return None
        if dotted.startswith("torch.Tensor."):
            return self._why_method(dotted.split(".")[2])
        for allowed in TORCH_ALLOWED:
            if dotted == allowed or dotted.startswith(allowed + "."):
                return None
        return (
            "not a PyTorch allocation/view/metadata API (TORCH_ALLOWED); "
            "PyTorch compute in a candidate is a fallback"
        )

    def _why_method(self, name: str) -> str | None:
        public, private = tensor_compute_methods()
        if name in self.task_methods:
            return f"tensor method forbidden by the task (torch.Tensor.{name})"
        if name in public:
            return (
                f"Tensor.{name} is PyTorch compute; only allocation, view and metadata methods "
                "are allowed on tensors"
            )
        if name in private:
            return f"Tensor.{name} is a private PyTorch internal"
        return None

    def _check_dotted(self, node: ast.AST, dotteds: Iterable[str], written: str = "") -> None:
        for dotted in sorted(dotteds):
            why = self._why_forbidden_dotted(dotted)
            if why:
                shown = f"{written} ({dotted})" if written and written != dotted else dotted
                self._flag(node, shown, why)
                return

    # -- attributes on objects that are not modules -----------------------------------------
    def _check_attr_name(
        self,
        node: ast.AST,
        name: str,
        shown: str,
        tensor: bool = True,
        private_ok: bool = False,
    ) -> None:
        """The rules for an attribute of an object the checker cannot name (a local, a call's
        result, a subscript): each attribute of such a chain is checked on its own.
        `private_ok`: the object is the method's own `self`/`cls`."""
        if name in FRAME_ATTRS:
            self._flag(node, shown, "reaches interpreter frames, code objects or globals")
            return
        if _is_dunder(name):
            if name not in DUNDER_ATTRS_ALLOWED:
                self._flag(node, shown, f"dunder attribute {name} reaches interpreter internals")
            return
        if name in DANGEROUS_MODULE_NAMES:
            self._flag(node, shown, f"reaches module {name}, which a candidate may not use")
            return
        if name in OS_FACILITY_NAMES:
            self._flag(node, shown, f"{name} is an OS facility a candidate may not use")
            return
        if name.startswith("_") and not private_ok:
            self._flag(
                node,
                shown,
                "private attribute of an object the check cannot name (a candidate's own "
                "private attributes live on self)",
            )
            return
        if self.jit_depth or not tensor:
            return  # inside @triton.jit, x.sum(0) / x.to(...) are Triton tensor operations
        why = self._why_method(name)
        if why:
            self._flag(node, shown, why)

    # -- visitors ---------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            root = a.name.split(".")[0]
            if root not in ALLOWED_IMPORT_ROOTS:
                self._flag(node, f"import {a.name}", why_import(root))
                continue
            if (
                a.name.startswith("torch.")
                and a.name not in TORCH_MODULES_ALLOWED
                and not (self.class_entry and a.name in NN_HOLDERS)
            ):
                why = self._why_forbidden_dotted(a.name) or "not an importable torch module"
                self._flag(node, f"import {a.name}", why)
                continue
            self._check_dotted(node, [a.name])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self._flag(
                node,
                "from " + "." * node.level + (node.module or "") + " import ...",
                "relative imports are not allowed; a candidate is a single file",
            )
            return
        module = node.module or ""
        root = module.split(".")[0]
        if root not in ALLOWED_IMPORT_ROOTS:
            self._flag(node, f"from {module} import ...", why_import(root))
            return
        for a in node.names:
            if a.name == "*":
                self._flag(node, f"from {module} import *", "star imports hide what is used")
                continue
            dotted = f"{module}.{a.name}"
            why = self._why_forbidden_dotted(dotted)
            if why:
                self._flag(node, dotted, why)

    def _enter(self, args: ast.arguments, body: list[ast.stmt] | ast.expr) -> None:
        params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        declared_global: set[str] = set()
        for stmt in body if isinstance(body, list) else [body]:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Global | ast.Nonlocal):
                    declared_global.update(n.names)
        self.scopes.append(frozenset((self.scopes[-1] | params) - declared_global))

    def _shadowed(self, name: str) -> bool:
        return name in self.scopes[-1]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name in FORBIDDEN_METHOD_DEFS:
            self._flag(node, f"def {node.name}", "hooks PyTorch's dispatcher")
        if self.class_entry and node.name in BIND_METHOD_DEFS:
            self._flag(
                node,
                f"def {node.name}",
                "the judge calls it while it loads the reference's weights (untraced): the "
                "module's own is used",
            )
        for d in node.decorator_list:
            self.visit(d)
        self.visit(node.args)  # defaults and annotations belong to the enclosing scope
        if node.returns:
            self._annotation(node.returns)
        is_kernel = id(node) in self.facts.kernel_nodes
        in_init = id(node) in self.init_ids
        in_method = id(node) in self.method_ids
        self.method_depth += in_method
        self.jit_depth += is_kernel
        self.init_depth += in_init
        self._enter(node.args, node.body)
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()
        self.jit_depth -= is_kernel
        self.init_depth -= in_init
        self.method_depth -= in_method

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)
        self._enter(node.args, node.body)
        self.visit(node.body)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.method_ids |= {
            id(s) for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        self.init_ids |= {
            id(s) for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"
        }
        for base in node.bases:
            dotteds = self.facts.resolve(base)
            if self.class_entry and dotteds == {"torch.nn.Module"}:
                continue  # a class entry point is an nn.Module
            if any(d == "torch" or d.startswith("torch.") for d in dotteds):
                self._flag(
                    base,
                    f"class {node.name}({'/'.join(sorted(dotteds))})",
                    "subclassing a torch type can hook the dispatcher or fake results",
                )
        self.generic_visit(node)

    def _annotation(self, node: ast.expr) -> None:
        """An annotation, and the code inside one written as a string: such a string is Python
        that `typing.get_type_hints` and what calls it evaluate (a registration with
        functools.singledispatch ran eval through one), so it is checked as code."""
        self.visit(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value.strip(), mode="eval")
            except SyntaxError:
                return  # not an expression: nothing can evaluate it
            for inner in ast.walk(parsed):
                ast.copy_location(inner, node)
            self.visit(parsed.body)

    def visit_arg(self, node: ast.arg) -> None:
        if node.annotation is not None:
            self._annotation(node.annotation)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)
        self._annotation(node.annotation)
        if node.value is not None:
            self.visit(node.value)

    def visit_Match(self, node: ast.Match) -> None:
        # a class pattern's keywords read attributes of the subject (`case object(__globals__=g)`)
        # and a mapping pattern takes values out of a dict (`case {"eval": ev}`), with no
        # attribute or subscript expression for the rules above to see
        self._flag(
            node,
            "match statement",
            "pattern matching reads attributes and mapping values the check cannot follow; "
            "use if/elif",
        )
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in BIND_HOOKS:
            self._flag(
                node,
                f".{node.attr}",
                "a hook on loading weights runs while the judge copies them in (untraced)",
            )
        if node.attr in FORMAT_METHODS and id(node) not in self.format_calls_ok:
            self._flag(
                node,
                f".{node.attr}",
                "a format string that is not a constant (or a format method used as a value) "
                "can read any attribute of its arguments; format a constant string",
            )
        dotteds = self.facts.resolve(node)
        if dotteds:
            if isinstance(node.ctx, ast.Store | ast.Del):
                self._flag(
                    node,
                    _spelled(node, dotteds),
                    "monkeypatching: assigning to or deleting an attribute of an imported "
                    "module or object changes the judge's view",
                )
                return
            before = len(self.violations)
            written = ".".join(chain(node) or [])
            self._check_dotted(node, dotteds, written)
            # the outermost attribute of a chain: used as a value (inner ones are not visited)
            if (
                len(self.violations) == before
                and id(node) not in self.facts.alias_rhs_ids
                and id(node) not in self.module_values_ok
                and any(is_module_name(d) for d in dotteds)
                and not (self.class_entry and dotteds <= NN_HOLDERS)
            ):
                self._flag(
                    node,
                    _spelled(node, dotteds),
                    "a module used as a value (in a list, call or return) hides what is reached "
                    "through it; use its attributes directly",
                )
            return
        base = node.value
        # `self`/`cls` of a method of one of the candidate's classes, not a helper's parameter
        # that happens to be called so (a tensor named `self` slipped tensor methods past this
        # check: a red-team pass, 2026-12-08)
        own = self.method_depth > 0 and isinstance(base, ast.Name) and base.id in ("self", "cls")
        private_ok = own
        tensor = not (
            self.facts.is_non_tensor_call(base)
            or (isinstance(base, ast.Name) and base.id in self.facts.non_tensor_names)
            # self.matmul where the class assigns self.matmul (a layer): its own attribute
            or (own and base.id == "self" and node.attr in self.facts.self_attrs)
        )
        self._check_attr_name(node, node.attr, f".{node.attr}", tensor, private_ok)
        self.visit(base)

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if not isinstance(node.ctx, ast.Load):
            return
        local = self._shadowed(name)
        if name in FORBIDDEN_BUILTINS and not local:
            self._flag(node, name, FORBIDDEN_BUILTINS[name])
            return
        if name in DYNAMIC_ATTR_BUILTINS and not local and id(node) not in self.call_funcs:
            self._flag(node, name, f"{name} used as a value hides which attribute is reached")
            return
        if _is_dunder(name) and name not in DUNDER_NAMES_ALLOWED:
            self._flag(node, name, "dunder name reaches interpreter internals")
            return
        dotteds = self.facts.resolve_name(name)
        if not dotteds:
            return
        value_ok = id(node) in self.facts.alias_rhs_ids or id(node) in self.module_values_ok
        if not value_ok and self.facts.binds_module(name):
            self._flag(
                node,
                name,
                f"module {'/'.join(sorted(dotteds))} used as a value; use its attributes directly",
            )
            return
        self._check_dotted(node, dotteds, name)

    def visit_Constant(self, node: ast.Constant) -> None:
        if not isinstance(node.value, str):
            return
        if node.value in FORBIDDEN_METHOD_DEFS:
            self._flag(node, repr(node.value), "names a PyTorch dispatcher hook")
        elif _is_dunder(node.value) and node.value not in (
            DUNDER_STRINGS_ALLOWED | DUNDER_NAMES_ALLOWED | DUNDER_ATTRS_ALLOWED
        ):
            self._flag(
                node,
                repr(node.value),
                "a dunder name as a string is a key into interpreter internals "
                "(d['__builtins__'], getattr(f, '__globals__'))",
            )

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "type" and len(node.args) == 3:
            self._flag(
                node,
                "type(name, bases, namespace)",
                "creates a class dynamically (around the subclass and dispatch-hook checks)",
            )
        if isinstance(func, ast.Name) and not self._shadowed(func.id):
            if func.id in DYNAMIC_ATTR_BUILTINS:
                self.call_funcs.add(id(func))
                self._check_dynamic_attr(node, func.id)
            elif func.id == "hasattr" and node.args:
                if isinstance(node.args[0], ast.Name | ast.Attribute):
                    self.module_values_ok.add(id(node.args[0]))  # a bool cannot leak anything
        if isinstance(func, ast.Attribute) and func.attr in FORMAT_METHODS:
            self._check_format_call(node, func)
        self.generic_visit(node)

    def _check_format_call(self, node: ast.Call, func: ast.Attribute) -> None:
        """`"...".format(...)` / `str.format("...", ...)` / `.format_map`: the format string must
        be a constant whose fields pass the attribute rules ("{0.shape}" yes, "{0.__globals__}"
        and "{0[__builtins__]}" no). Anything else is left for visit_Attribute to refuse."""
        receiver = func.value
        template: ast.expr | None = None
        if isinstance(receiver, ast.Constant) and isinstance(receiver.value, str):
            template = receiver
        elif (
            isinstance(receiver, ast.Name)
            and receiver.id == "str"
            and not self._shadowed("str")
            and not self.facts.resolve_name("str")
            and "str" not in self.facts.module_names
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            template = node.args[0]
        if template is None or func.attr == "vformat":
            return
        self.format_calls_ok.add(id(func))
        assert isinstance(template, ast.Constant)
        fields = format_fields(template.value)
        if fields is None:
            self._flag(template, f"{func.attr}", "a malformed format string")
            return
        for kind, name in fields:
            shown = f".{name}" if kind == "attr" else f"[{name}]"
            if kind == "attr":
                self._check_attr_name(
                    template, name, f"{template.value!r}: field {shown}", tensor=False
                )
            elif _is_dunder(name):
                self._flag(
                    template,
                    f"{template.value!r}: field {shown}",
                    "a format field that indexes with a dunder name reaches interpreter internals",
                )

    def _check_dynamic_attr(self, node: ast.Call, fn: str) -> None:
        if len(node.args) < 2 or not (
            isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
        ):
            self._flag(node, fn, f"{fn} with a computed attribute name")
            return
        target, attr = node.args[0], node.args[1].value
        dotteds = self.facts.resolve(target)
        if dotteds:
            if fn == "getattr":
                self._flag(
                    node,
                    f"getattr({'/'.join(sorted(dotteds))}, {attr!r})",
                    "getattr on a module; write the attribute directly",
                )
            else:
                self._flag(
                    node,
                    f"{fn}({'/'.join(sorted(dotteds))}, {attr!r}, ...)",
                    "monkeypatching an imported module or object",
                )
            return
        self._check_attr_name(node, attr, f"{fn}(..., {attr!r})")

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.MatMult) and not self.jit_depth:
            self._flag(
                node,
                "@",
                "the @ operator is a PyTorch matmul outside @triton.jit "
                "(inside a kernel use tl.dot)",
            )
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.op, ast.MatMult) and not self.jit_depth:
            self._flag(node, "@=", "the @ operator is a PyTorch matmul outside @triton.jit")
        self.generic_visit(node)
