"""write_test: the policy writes a test script for the task once, before the first kernel
(agent.llm_tests, as KernelAgent does; the model's prompt is prompts/write_test.md.j2).

The script is saved in the run directory (model_test/) and kept in the state. Every candidate is
then run against it (agents/core/model_tests.py) and the output is shown in repair prompts. It is
feedback, never the verdict: the judge alone decides correctness.
"""

from __future__ import annotations

from typing import Any

from agents.core.context import RunContext
from agents.core.nodes.budget import budget_stop
from agents.core.state import AgentState


def write_test(state: AgentState, ctx: RunContext) -> dict[str, Any]:
    with budget_stop(ctx, "write_test") as stop:
        proposal = ctx.policy.write_test(ctx, state)
    if stop:
        return {**stop.update, "model_test": {"code": None, "path": None, "note": stop.reason}}
    if proposal.code is None:
        note = proposal.note
        ctx.event("model_test_written", path=None, note=note)
        ctx.progress.note(f"write_test: {note}", style="yellow")
        return {**proposal.updates, "model_test": {"code": None, "path": None, "note": note}}
    path = ctx.run.write_model_test(proposal.code, proposal.prompt, proposal.reply)
    ctx.event("model_test_written", path=path, lines=len(proposal.code.splitlines()))
    ctx.progress.note(f"write_test: the model's test is {path} (feedback only; the judge decides)")
    return {**proposal.updates, "model_test": {"code": proposal.code, "path": path, "note": ""}}
