"""kernforge's agent: the front door is the Python API, mirroring the CLI: runs in `agents.api`,
every other command in `agents.api_tools`, all of them here.

    import agents
    verdict = agents.evaluate("softmax_fp32", "my_kernel.py", device="cpu")
    result = agents.run("softmax_fp32", llm="offline", device="cpu", budget="iterations=4")
    lite = agents.tasks("lite").tasks
    report = agents.report([result.run_dir])

The rooms (each a package with a README line in agents/README.md):

- `agents/core/`: the LangGraph agent: graph, state, settings and config, the run context and its
  test seams, the policy interface and the model policy, nodes/, llm/ (providers, budgets,
  retries), the run directory, pairs, progress output
- `agents/offline/`: the offline policy (no model) and its rule-based code generator (codegen/)
- `agents/bench/`: methods side by side: the plan, its cells, parallel dispatch, the worked example
- `agents/cli/`: the `kernforge` command, one module per command group
- `agents/api.py`, `agents/api_tools.py`: the Python API (runs; every other command)
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_RUNS = ("evaluate", "run", "resume", "start", "RunResult", "RunError")
_TOOLS = (
    "tasks",
    "task",
    "kb_build",
    "kb_search",
    "kb_stats",
    "bench_methods",
    "import_kernels",
    "report",
    "export_pairs",
    "TaskList",
    "Imported",
    "Report",
    "InputError",
    "KnowledgeBaseError",
)
_EXPORTS: dict[str, str] = {
    **{name: "agents.api" for name in _RUNS},
    **{name: "agents.api_tools" for name in _TOOLS},
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import the API on first use, so `import agents` stays cheap."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name]), name)
