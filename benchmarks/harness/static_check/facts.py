"""Flow-insensitive facts about a candidate module, read from its syntax tree: which dotted
names each local name may stand for (imports and chains of aliases), its module-level functions
and classes, its ``@triton.jit`` kernels, and the names that never hold a tensor."""

from __future__ import annotations

import ast

from benchmarks.harness.static_check.library import is_module_name
from benchmarks.harness.static_check.rules import JIT_DECORATORS, NON_TENSOR_RESULTS


def chain(node: ast.AST) -> list[str] | None:
    """['a', 'b', 'c'] for the expression a.b.c; None if it is not a pure name chain."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _strip_call(node: ast.expr) -> ast.expr:
    return node.func if isinstance(node, ast.Call) else node


class ModuleFacts:
    """Flow-insensitive facts about the module: what each name may stand for."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.imports: dict[str, set[str]] = {}  # name -> dotted names bound by import
        self.import_modules: set[str] = set()  # names bound by `import a.b [as c]`
        self.aliases: dict[str, list[ast.expr]] = {}  # name -> Name/Attribute right-hand sides
        self.alias_rhs_ids: set[int] = set()  # nodes that are such right-hand sides
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.module_names: set[str] = set()  # every name bound at module level
        self.kernels: dict[str, int] = {}  # kernel name -> line
        self.kernel_nodes: set[int] = set()  # ids of @triton.jit FunctionDefs
        self._collect()
        self.non_tensor_names = self._collect_non_tensor_names()
        self.self_attrs = self._collect_self_attrs()

    # -- collection -------------------------------------------------------------------------
    def _collect(self) -> None:
        for stmt in self.tree.body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions[stmt.name] = stmt
                self.module_names.add(stmt.name)
            elif isinstance(stmt, ast.ClassDef):
                self.classes[stmt.name] = stmt
                self.module_names.add(stmt.name)
            elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            self.module_names.add(n.id)
                    if isinstance(t, ast.Name) and isinstance(stmt.value, ast.Lambda):
                        self.functions[t.id] = stmt.value
        # `m = torch` in a class body makes an attribute (C.m, self.m), not a name the alias
        # table can follow, so it is not an alias: `torch` there is a module used as a value.
        class_body = {
            id(stmt)
            for node in ast.walk(self.tree)
            if isinstance(node, ast.ClassDef)
            for stmt in node.body
        }
        for node in ast.walk(self.tree):
            if id(node) in class_body and isinstance(node, ast.Assign | ast.AnnAssign):
                continue
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self._bind(a.asname, a.name, module=True)
                    else:
                        root = a.name.split(".")[0]
                        self._bind(root, root, module=True)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    if a.name != "*":
                        self._bind(a.asname or a.name, f"{node.module}.{a.name}", module=False)
            elif isinstance(node, ast.Assign):
                self._alias_pairs(node.targets, node.value)
            elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
                self._alias_pairs([node.target], node.value)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if any(self._is_jit(d) for d in node.decorator_list):
                    self.kernels[node.name] = node.lineno
                    self.kernel_nodes.add(id(node))
        # kernel = triton.jit(fn) / triton.autotune(...)(triton.jit(fn)); plain aliases of a kernel
        # (k = kernel) are followed by kernel_alias instead
        changed = True
        while changed:
            changed = False
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Assign) and self._makes_kernel(node.value):
                    for t in node.targets:
                        if isinstance(t, ast.Name) and t.id not in self.kernels:
                            self.kernels[t.id] = node.lineno
                            changed = True

    def _collect_non_tensor_names(self) -> set[str]:
        """Names bound only ever by `name = <call of a NON_TENSOR_RESULTS API>`
        (e.g. `info = torch.finfo(x.dtype)`), never as a parameter or any other way."""
        bindings: dict[str, int] = {}
        non_tensor: dict[str, int] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                bindings[node.id] = bindings.get(node.id, 0) + 1
            elif isinstance(node, ast.arg):
                bindings[node.arg] = bindings.get(node.arg, 0) + 1
            elif isinstance(node, ast.alias):
                name = node.asname or node.name.split(".")[0]
                bindings[name] = bindings.get(name, 0) + 1
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bindings[node.name] = bindings.get(node.name, 0) + 1
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and self.is_non_tensor_call(node.value)
            ):
                name = node.targets[0].id
                non_tensor[name] = non_tensor.get(name, 0) + 1
        return {n for n, count in non_tensor.items() if bindings.get(n) == count}

    def _collect_self_attrs(self) -> set[str]:
        """Attributes the module's classes assign on their instances (`self.matmul =
        nn.Linear(...)` in a method whose first parameter is `self`): `self.matmul(x)` calls the
        class's own attribute, not the tensor method of that name. What is assigned is checked
        where it is assigned."""
        found: set[str] = set()
        for cls in self.classes.values():
            for method in cls.body:
                if not isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                params = method.args.posonlyargs + method.args.args
                if not params or params[0].arg != "self":
                    continue
                for node in ast.walk(method):
                    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                        for target in targets:
                            for t in ast.walk(target):
                                if (
                                    isinstance(t, ast.Attribute)
                                    and isinstance(t.value, ast.Name)
                                    and t.value.id == "self"
                                ):
                                    found.add(t.attr)
        return found

    def is_non_tensor_call(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and bool(self.resolve(node.func) & NON_TENSOR_RESULTS)

    def _bind(self, name: str, dotted: str, *, module: bool) -> None:
        self.imports.setdefault(name, set()).add(dotted)
        if module:
            self.import_modules.add(name)
        if name not in self.module_names:
            self.module_names.add(name)

    def _alias_pairs(self, targets: list[ast.expr], value: ast.expr) -> None:
        for t in targets:
            if isinstance(t, ast.Name) and chain(value) is not None:
                self.aliases.setdefault(t.id, []).append(value)
                self.alias_rhs_ids.add(id(value))
            elif isinstance(t, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List):
                if len(t.elts) == len(value.elts):
                    self._alias_pairs_zip(t.elts, value.elts)

    def _alias_pairs_zip(self, targets: list[ast.expr], values: list[ast.expr]) -> None:
        for t, v in zip(targets, values, strict=True):
            self._alias_pairs([t], v)

    def _is_jit(self, decorator: ast.expr) -> bool:
        return bool(self.resolve(_strip_call(decorator)) & JIT_DECORATORS)

    def _makes_kernel(self, value: ast.expr) -> bool:
        for n in ast.walk(value):
            if isinstance(n, ast.Call) and self.resolve(n.func) & JIT_DECORATORS:
                return True
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Call):
            # triton.autotune(...)(kernel) / triton.heuristics(...)(kernel)
            wrapper = self.resolve(value.func.func)
            if any(w.startswith("triton.") for w in wrapper):
                return any(isinstance(a, ast.Name) and a.id in self.kernels for a in value.args)
        return False

    # -- resolution -------------------------------------------------------------------------
    def resolve_name(self, name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        if name in seen:
            return set()
        out = set(self.imports.get(name, ()))
        for rhs in self.aliases.get(name, ()):
            out |= self.resolve(rhs, seen | {name})
        return out

    def resolve(self, node: ast.AST, seen: frozenset[str] = frozenset()) -> set[str]:
        """Dotted names an expression may stand for (empty when it is not rooted at an import)."""
        parts = chain(node)
        if parts is None:
            return set()
        heads = self.resolve_name(parts[0], seen)
        return {".".join([h, *parts[1:]]) for h in heads}

    def binds_module(self, name: str) -> bool:
        if name in self.import_modules:
            return True
        return any(is_module_name(d) for d in self.resolve_name(name))

    def kernel_names_in(self, node: ast.AST) -> set[str]:
        """Kernel names an expression refers to, directly or through simple aliases."""
        found: set[str] = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                found |= self.kernel_alias(n.id, frozenset())
        return found

    def kernel_alias(self, name: str, seen: frozenset[str]) -> set[str]:
        if name in self.kernels:
            return {name}
        if name in seen:
            return set()
        out: set[str] = set()
        for rhs in self.aliases.get(name, ()):
            if isinstance(rhs, ast.Name):
                out |= self.kernel_alias(rhs.id, seen | {name})
        return out
