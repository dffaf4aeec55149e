"""kernforge's agent: the front door is the Python API (`agents.api`), mirroring the CLI.

    import agents
    verdict = agents.evaluate("softmax_fp32", "my_kernel.py", device="cpu")
    result = agents.run("softmax_fp32", llm="offline", device="cpu", budget="iterations=4")

The rooms (each a package with a README line in agents/README.md):

- `agents/core/`: the LangGraph agent: graph, state, settings and config, the run context and its
  test seams, the policy interface and the model policy, nodes/, llm/ (providers, budgets,
  retries), the run directory, pairs, progress output
- `agents/offline/`: the offline policy (no model) and its rule-based code generator (codegen/)
- `agents/bench/`: methods side by side: the plan, its cells, parallel dispatch, the worked example
- `agents/cli/`: the `kernforge` command, one module per command group
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS: dict[str, str] = {
    "evaluate": "agents.api",
    "run": "agents.api",
    "resume": "agents.api",
    "start": "agents.api",
    "RunResult": "agents.api",
    "RunError": "agents.api",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import the API on first use, so `import agents` stays cheap."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
