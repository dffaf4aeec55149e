"""generator: propose a new kernel. The graph runs it N times in parallel (one `Send` per slot);
each call gets a job: its slot, whether it writes afresh or repairs a failed parent, and the
facts the prompt needs (retrieved knowledge, the visible history, the reflector's diagnosis).

The kernel comes from the run's policy (`ctx.policy.generate`, agents/core/policy.py): the
model's prompts, or the next reference kernel not yet tried.
"""

from __future__ import annotations

import hashlib
from typing import Any, TypedDict

from agents.core.context import RunContext
from agents.core.nodes.budget import budget_stop
from agents.core.state import Attempt


class GeneratorJob(TypedDict):
    slot: int
    candidates: int
    mode: str  # "fresh" or "repair"
    iteration: int
    parent: Attempt | None  # the failed attempt to repair
    reflection: dict[str, Any] | None
    retrieved: list[dict[str, Any]]
    knowledge_note: str
    references: list[dict[str, Any]]
    tried: list[str]  # reference ids already used
    history: list[Attempt]
    incumbent_id: int | None
    device_info: dict[str, Any]
    model_test: str | None  # the model-written test (agent.llm_tests), shown in the prompt


def candidate_key(iteration: int, slot: int, mode: str, parent_id: int | None, code: str) -> str:
    text = f"{iteration}|{slot}|{mode}|{parent_id}|{code}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def generator(job: GeneratorJob, ctx: RunContext) -> dict[str, Any]:
    slot, mode, iteration = job["slot"], job["mode"], job["iteration"]
    with budget_stop(ctx, "generator") as stop:
        proposal = ctx.policy.generate(ctx, job)
    if stop:
        return stop.update
    if proposal.code is None:
        ctx.event("generator", slot=slot, mode=mode, note=proposal.note)
        return proposal.updates
    ctx.event("generator", slot=slot, mode=mode, **proposal.logged)
    candidate = proposal.candidate(
        key=candidate_key(iteration, slot, mode, proposal.parent_id, proposal.code),
        node="generator",
        mode=mode,
        iteration=iteration,
        slot=slot,
        parent_id=proposal.parent_id,
        origin=proposal.origin,
    )
    return {**proposal.updates, "pending": [candidate]}
