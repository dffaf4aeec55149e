"""Method presets: named configurations of the one agent graph (never a second agent).

A preset is a dict of settings (the keys of `agents.core.settings.SETTINGS`). It sits above the
built-in defaults and below everything a person sets (kernforge.toml, environment, flags), so
`--method offline --agent.candidates 3` still gets three candidates.

The switches that make methods differ are ordinary settings (agents/core/settings.py documents each):

    agent.candidates     kernels proposed in parallel per round (Send fan-out)
    agent.lineage        shared: every slot repairs the round's first failure;
                         per_slot: each slot repairs its own kernel (independent parallel chains)
    agent.reflect        failures go through the model's reflector before a repair
    agent.max_repairs    repairs of one approach before it is abandoned
    agent.restart        without a correct kernel, an abandoned approach is followed by a fresh
                         one (instead of the run giving up)
    agent.first_success  the first correct kernel ends the run; later candidates of its round
                         are not judged
    agent.optimize       correct kernels go on to profile -> optimizer (measure-revise)
    agent.ancestors      best correct kernels the optimizer sees (the incumbent is one)
    agent.llm_tests      the model writes a test once; every candidate runs it (feedback only)
    dropout.enabled      mask half the history on stagnation
    kb                   knowledge-base retrieval

docs/methods.md maps each preset to the published method and says exactly what differs.
"""

from __future__ import annotations

from typing import Any

from benchmarks import unknown_name

PRESETS: dict[str, dict[str, Any]] = {
    # Ours: parallel generation, reflection, profile-guided measure-revise, dropout, knowledge base.
    "aka": {
        "agent.candidates": 2,
        "agent.lineage": "shared",
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
    # KernelBench's baseline: one prompt, one kernel, judged once. No retrieval, no feedback, no
    # second call even when the reply has no code.
    "single-shot": {
        "kb": "off",
        "agent.candidates": 1,
        "agent.reflect": False,
        "agent.max_repairs": 0,
        "agent.nocode_retries": 0,
        "agent.optimize": False,
        "dropout.enabled": False,
    },
    # Meta's KernelAgent: N seeds refined in parallel, each on its own verification feedback, for
    # up to R rounds; the first correct kernel stops the others. No optimisation.
    "kernelagent": {
        "kb": "off",
        "agent.candidates": 4,
        "agent.lineage": "per_slot",
        "agent.reflect": False,
        "agent.max_repairs": 10,
        "agent.first_success": True,
        "agent.optimize": False,
        "agent.history_window": 8,
        "dropout.enabled": False,
    },
    # AMD's GEAK: generator / evaluator / reflector / optimizer iterations; the best ancestors go
    # to the optimizer; an approach gets at most max_repairs repairs; parallel chains merged in
    # one attempt tree.
    "geak": {
        "agent.candidates": 2,
        "agent.lineage": "per_slot",
        "agent.reflect": True,
        "agent.max_repairs": 5,
        "agent.restart": True,
        "agent.optimize": True,
        "agent.ancestors": 2,
        "dropout.enabled": False,
    },
}

# Methods that need a model: every preset except the offline policy.
NEEDS_MODEL: frozenset[str] = frozenset(name for name in PRESETS if name != "offline")


def preset(method: str) -> dict[str, Any]:
    """The settings of a method preset; a clear error for an unknown name."""
    if method not in PRESETS:
        raise ValueError(unknown_name("method", method, PRESETS))
    return dict(PRESETS[method])
