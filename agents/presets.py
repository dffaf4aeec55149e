"""Method presets: named configurations of the one agent graph (never a second agent).

A preset is a dict of settings (the keys of `agents.settings.SETTINGS`). It sits above the
built-in defaults and below everything a person sets (kernforge.toml, environment, flags), so
`--method offline --agent.candidates 3` still gets three candidates.

The switches that make methods differ are ordinary settings:

    agent.candidates   kernels proposed in parallel per round (Send fan-out)
    agent.reflect      failures go through the reflector before a repair
    agent.max_repairs  repair rounds in a row before the agent gives up on a branch
    agent.optimize     correct kernels go on to profile -> optimizer (measure-revise)
    dropout.enabled    mask half the history on stagnation

Planned presets, as configurations (not yet validated against their papers, so not offered):
    single-shot   candidates=1, reflect=false, max_repairs=0, optimize=false, iterations=1
    kernelagent   candidates=4, reflect=true, optimize=false (parallel repair until correct)
    geak          candidates=2, reflect=true, optimize=true, dropout.enabled=false
"""

from __future__ import annotations

from typing import Any

PRESETS: dict[str, dict[str, Any]] = {
    # The full graph: parallel generation, reflection, profiler-guided measure-revise, dropout.
    "aka": {
        "agent.candidates": 2,
        "agent.reflect": True,
        "agent.max_repairs": 3,
        "agent.optimize": True,
        "dropout.enabled": True,
    },
    # No model: reference kernels from the knowledge base, measured tunable search, rule-based
    # diagnosis. One candidate per round: the policy is deterministic.
    "offline": {
        "llm": "offline",
        "agent.candidates": 1,
        "agent.reflect": True,
        "agent.max_repairs": 3,
        "agent.optimize": True,
        "dropout.enabled": True,
    },
}


def preset(method: str) -> dict[str, Any]:
    """The settings of a method preset; a clear error for an unknown name."""
    if method not in PRESETS:
        raise ValueError(f"unknown method {method!r}; available: {', '.join(PRESETS)}")
    return dict(PRESETS[method])
