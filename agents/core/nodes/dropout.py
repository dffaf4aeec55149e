"""dropout: on stagnation, hide a random half of the visible history from the prompts.

Never the incumbent, never the latest attempt. Masked attempts keep every file on disk and stay
in the state (with `masked=True`); an event lists which were masked and why. The random choice
is seeded by the run's seed and the round, so a resumed or repeated run masks the same ones.
"""

from __future__ import annotations

import math
import random
from typing import Any

from agents.core.context import RunContext
from agents.core.state import AgentState


def eligible(state: AgentState) -> list[int]:
    attempts = state.get("attempts", [])
    if not attempts:
        return []
    latest = max(a.id for a in attempts)
    keep = {state.get("incumbent_id"), latest}
    return [a.id for a in attempts if not a.masked and a.id not in keep]


def dropout(state: AgentState, ctx: RunContext) -> dict[str, Any]:
    iteration = state.get("iteration", 0)
    candidates = eligible(state)
    rng = random.Random(ctx.config.seed * 1_000_003 + iteration)
    chosen = sorted(rng.sample(candidates, math.ceil(len(candidates) / 2))) if candidates else []
    masked = [
        a.model_copy(update={"masked": True}) for a in state.get("attempts", []) if a.id in chosen
    ]
    record = {
        "iteration": iteration,
        "masked": chosen,
        "kept_visible": sorted(
            set(a.id for a in state.get("attempts", []) if not a.masked) - set(chosen)
        ),
        "incumbent": state.get("incumbent_id"),
        "stale_rounds": state.get("stale", 0),
    }
    ctx.event(
        "dropout",
        **record,
        note="masked attempts stay on disk and in the state; they are only hidden from prompts",
    )
    ctx.progress.note(
        f"dropout: {state.get('stale', 0)} rounds without improvement; masked attempts {chosen or 'none'}",
        style="magenta",
    )
    return {"attempts": masked, "dropouts": [*state.get("dropouts", []), record]}
