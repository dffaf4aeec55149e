"""The dependency rule (DESIGN.md, "Layout"), pinned.

- `profiling` and `prompts` import nothing of ours;
- `benchmarks` imports only `profiling`; `knowledge_base` only `benchmarks` and `profiling`;
  `agents` only `benchmarks`, `knowledge_base`, `profiling` and `prompts`;
- an import that crosses from one of these packages into another goes through the other's front
  door: a name its `__init__.py` lists in `__all__` (`from benchmarks import evaluate`, never
  `from benchmarks.harness.judge import evaluate`);
- no two modules import each other, directly or around a longer circle, not even lazily inside
  a function (a lazy import that closes a circle hides the circle, it does not remove it).

Every import counts, including those inside functions. Task files and reference kernels are data
that the harness loads, so they are held to the same rule.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("agents", "benchmarks", "knowledge_base", "profiling", "prompts")
MAY_IMPORT = {
    "profiling": set(),
    "prompts": set(),
    "benchmarks": {"profiling"},
    "knowledge_base": {"benchmarks", "profiling"},
    "agents": {"benchmarks", "knowledge_base", "profiling", "prompts"},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_module(dotted: str) -> bool:
    base = REPO.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _sources() -> list[Path]:
    return sorted(p for root in ROOTS for p in (REPO / root).rglob("*.py"))


def _imports(tree: ast.AST) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) for every absolute import, in functions too; names empty for
    `import x.y`. Imports under `if TYPE_CHECKING:` are for annotations only and do not count."""
    found: list[tuple[int, str, list[str]]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.extend((child.lineno, a.name, []) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.append((child.lineno, child.module, [a.name for a in child.names]))
            visit(child)

    visit(tree)
    return found


def test_packages_import_only_what_the_layout_allows_and_only_through_front_doors() -> None:
    wrong: list[str] = []
    for path in _sources():
        own = path.relative_to(REPO).parts[0]
        for line, module, names in _imports(ast.parse(path.read_text())):
            root = module.split(".")[0]
            if root not in ROOTS or root == own:
                continue
            where = f"{path.relative_to(REPO)}:{line}"
            if root not in MAY_IMPORT[own]:
                wrong.append(f"{where}: {own} may not import {root} ({module})")
            elif module != root:
                wrong.append(f"{where}: imports {module}; use the front door `{root}`")
            elif names:  # `import prompts` (the package itself) is its front door too
                public = set(importlib.import_module(root).__all__)
                hidden = [n for n in names if n not in public]
                if hidden:
                    wrong.append(f"{where}: {root} does not export {hidden[0]} (its __all__)")
    assert not wrong, "\n".join(wrong)


def _module_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in _sources():
        name = _module_name(path)
        edges: set[str] = set()
        for _, module, names in _imports(ast.parse(path.read_text())):
            if module.split(".")[0] not in ROOTS:
                continue
            subs = [f"{module}.{n}" for n in names if _is_module(f"{module}.{n}")]
            edges.update(subs or [module])
        edges.discard(name)
        graph[name] = edges
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            connect(v)
    return out


def test_no_import_circles() -> None:
    assert _circles(_module_graph()) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("root", ["agents", "benchmarks", "knowledge_base", "profiling"])
def test_every_name_a_front_door_exports_resolves(root: str) -> None:
    package = __import__(root)
    for name in getattr(package, "__all__", ()):
        assert getattr(package, name) is not None, f"{root}.{name}"


def test_front_doors_import_nothing_heavy() -> None:
    code = (
        "import sys, agents, benchmarks, knowledge_base, profiling, prompts; "
        "print(sorted(m for m in ('torch', 'triton', 'chromadb', 'langgraph') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
