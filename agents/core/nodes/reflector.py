"""reflector: diagnose the latest failure before the generator repairs it.

Rules first (agents/offline/policy.py: error class -> advice, plus hints from the judge's message);
with a model and `agent.reflect`, the model reads the failing kernel and the verdict
(prompts/reflector.md.j2) and explains the root cause. The diagnosis goes to the repair prompt.
With `agent.lineage = per_slot` every failed kernel of the round is diagnosed (each slot repairs
its own); otherwise the round's first failure, which every slot repairs.
"""

from __future__ import annotations

import json
from typing import Any

from agents.core.ask import ask_for_text
from agents.core.context import RunContext
from agents.core.llm.base import BudgetExceeded
from agents.core.prompting import render, task_contract
from agents.core.state import AgentState, Attempt, latest_batch
from agents.offline import policy as offline


def diagnose(state: AgentState, ctx: RunContext, target: Attempt) -> dict[str, Any]:
    """The diagnosis of one failed attempt: the rules' reading, then the model's if asked.
    Raises BudgetExceeded when the model may not be asked any more."""
    rules = offline.diagnose(target.verdict)
    reflection: dict[str, Any] = {"attempt_id": target.id, "by": "rules", **rules}
    if ctx.offline or not ctx.config.reflect:
        return reflection
    verdict = json.loads(
        (ctx.run.attempt_dir(target.id) / "verdict.json").read_text(encoding="utf-8")
    )
    failed_view = {
        "id": target.id,
        "code": ctx.run.read_code(target),
        "error_class": target.verdict.error_class,
        "stage": target.verdict.stage_reached or "nothing",
        "message": target.verdict.message,
        "mismatch": verdict.get("mismatch"),
    }
    task = task_contract(ctx.task)
    system = render(
        "system.md.j2",
        task=task,
        device=state.get("device_info", {"name": ctx.device, "peaks": "not measured"}),
    )
    prompt = render("reflector.md.j2", task=task, failed=failed_view, rules=rules)
    text, _ = ask_for_text(ctx, "reflector", system, prompt)
    return {**reflection, "by": "llm", "diagnosis": text.strip()}


def reflector(state: AgentState, ctx: RunContext) -> dict[str, Any]:
    failed = [a for a in latest_batch(state) if not a.passed]
    if not failed:
        reflection = {
            "attempt_id": None,
            "by": "rules",
            "error_class": "no_code",
            "diagnosis": "the previous round produced no candidate (no usable code)",
            "advice": "answer with the complete module in one ```python block",
        }
        ctx.event("reflection", **reflection)
        return {"reflection": reflection, "reflections": [reflection]}
    targets = failed if ctx.config.lineage == "per_slot" else failed[:1]
    reflections: list[dict[str, Any]] = []
    updates: dict[str, Any] = {}
    for target in targets:
        try:
            reflection = diagnose(state, ctx, target)
        except BudgetExceeded as exc:
            ctx.event("budget_stop", node="reflector", reason=str(exc))
            reflections.append(
                {"attempt_id": target.id, "by": "rules", **offline.diagnose(target.verdict)}
            )
            return {
                "stop_reason": str(exc),
                "reflection": reflections[0],
                "reflections": reflections,
                **ctx.llm_updates(),
            }
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
