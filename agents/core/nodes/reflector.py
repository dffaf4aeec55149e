"""reflector: diagnose the latest failure before the generator repairs it.

The diagnosis comes from the run's policy (`ctx.policy.diagnose`, agents/core/policy.py): rules
first (error class -> advice, plus hints from the judge's message); with a model and
`agent.reflect`, the model reads the failing kernel and the verdict (prompts/reflector.md.j2)
and explains the root cause. The diagnosis goes to the repair prompt. With
`agent.lineage = per_slot` every failed kernel of the round is diagnosed (each slot repairs its
own); otherwise the round's first failure, which every slot repairs. When the budget runs out
mid-round, the rules' reading stands for the attempt the model could not be asked about.
"""

from __future__ import annotations

from typing import Any

from agents.core.context import RunContext
from agents.core.diagnosis import rule_reflection
from agents.core.nodes.budget import budget_stop
from agents.core.state import AgentState, latest_batch

NO_CANDIDATE = {
    "attempt_id": None,
    "by": "rules",
    "error_class": "no_code",
    "diagnosis": "the previous round produced no candidate (no usable code)",
    "advice": "answer with the complete module in one ```python block",
}


def reflector(state: AgentState, ctx: RunContext) -> dict[str, Any]:
    failed = [a for a in latest_batch(state) if not a.passed]
    if not failed:
        reflection = dict(NO_CANDIDATE)
        ctx.event("reflection", **reflection)
        return {"reflection": reflection, "reflections": [reflection]}
    targets = failed if ctx.config.lineage == "per_slot" else failed[:1]
    reflections: list[dict[str, Any]] = []
    updates: dict[str, Any] = {}
    for target in targets:
        with budget_stop(ctx, "reflector") as stop:
            reflection = ctx.policy.diagnose(ctx, state, target)
        if stop:
            reflections.append(rule_reflection(target))
            return {**stop.update, "reflection": reflections[0], "reflections": reflections}
        if reflection["by"] == "llm":
            updates.update(ctx.llm_updates())
        reflections.append(reflection)
        ctx.event(
            "reflection",
            **{k: (v[:1000] if isinstance(v, str) else v) for k, v in reflection.items()},
        )
        ctx.progress.note(
            f"reflector ({reflection['by']}) on attempt {target.id}: {reflection['diagnosis'][:160]}"
        )
    return {"reflection": reflections[0], "reflections": reflections, **updates}
