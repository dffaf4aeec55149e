"""finish: write best/ and the final summary, log why the run stopped, tell the person where the
best kernel is."""

from __future__ import annotations

from typing import Any

from agents.core.context import RunContext
from agents.core.outcome import best_summary, why_finish
from agents.core.rundir import write_json_atomic
from agents.core.state import AgentState, incumbent


def finish(state: AgentState, ctx: RunContext) -> dict[str, Any]:
    reason = why_finish(state, ctx) or "the graph ran to its end"
    best = incumbent(state)
    summary = best_summary(ctx, state, best, reason, finished=True)
    if best is not None:
        ctx.run.write_best(ctx.run.read_code(best), summary)
    write_json_atomic(ctx.run.path / "summary.json", summary)
    ctx.save_spend()
    ctx.event(
        "finish",
        reason=reason,
        best_attempt=summary["best_attempt"],
        best_kernel=summary["best_kernel"],
        speed=summary["speed"],
        attempts=summary["attempts"],
        pairs=summary["pairs"],
        budget=summary["budget"]["used"],
    )
    ctx.progress.final(summary)
    return {"finished": True, "stop_reason": reason, "spend": ctx.tracker.snapshot()}
