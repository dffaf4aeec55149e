"""The bench package's imports point one way: plan <- cells <- parallel <- run <- the front door.

Read from the source (every import statement, those inside functions too), so a lazy import
that closes a circle is caught as well as a top-level one.
"""

from __future__ import annotations

import ast
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "agents" / "bench"
PACKAGE = "agents.bench"


def module_name(path: Path) -> str:
    return PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"


def bench_imports(path: Path) -> set[str]:
    """The agents.bench modules that `path` imports (the package itself for its front door)."""
    submodules = {p.stem for p in BENCH.glob("*.py")}
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith(PACKAGE)}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == PACKAGE:
                for alias in node.names:  # `from agents.bench import plan` names a module
                    out.add(f"{PACKAGE}.{alias.name}" if alias.name in submodules else PACKAGE)
            elif node.module.startswith(PACKAGE + "."):
                out.add(node.module)
    out.discard(module_name(path))
    return out


def graph() -> dict[str, set[str]]:
    return {module_name(p): bench_imports(p) for p in sorted(BENCH.glob("*.py"))}


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle in `edges` (as a path that ends where it starts), or None."""
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return [*path[path.index(nxt) :], nxt] if nxt in path else [node, nxt]
            if nxt not in state and (found := visit(nxt, [*path, nxt])):
                return found
        state[node] = "done"
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


def test_the_cycle_finder_finds_a_circle() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_no_import_circle_inside_the_bench() -> None:
    edges = graph()
    assert {"agents.bench.plan", "agents.bench.cells", "agents.bench.run"} <= set(edges)
    assert cycle(edges) is None, " -> ".join(cycle(edges) or [])


def test_the_bench_rooms_import_downwards_only() -> None:
    edges = graph()
    assert edges["agents.bench.plan"] == set()
    assert edges["agents.bench.cells"] == {"agents.bench.plan"}
    assert edges["agents.bench.parallel"] == {"agents.bench.plan", "agents.bench.cells"}
    assert edges["agents.bench.run"] <= {
        "agents.bench.plan",
        "agents.bench.cells",
        "agents.bench.parallel",
    }
    # only the front door and the worked example (which uses it) may import the front door
    users = {m for m, targets in edges.items() if PACKAGE in targets}
    assert users <= {"agents.bench.worked_example", "agents.bench.worked_example_readme"}


def test_the_front_door_exports_what_the_cli_and_the_worked_example_use() -> None:
    import agents.bench as bench

    for name in bench.__all__:
        assert hasattr(bench, name), name
    assert {"make_plan", "run_bench", "stored_plan", "stored_outcomes", "summarize"} <= set(
        bench.__all__
    )
