"""How a run stands: whether it should finish (and why, in words), and the summary of its best
kernel that best/summary.json holds. The routing functions in graph.py and the finish node both
ask `why_finish`, so the reason printed is the reason routed on."""

from __future__ import annotations

from typing import Any

from agents.core.context import RunContext
from agents.core.progress import speed_text, spend_text
from agents.core.state import AgentState, Attempt, incumbent


def why_finish(state: AgentState, ctx: RunContext) -> str | None:
    """The reason to stop now, or None to go on."""
    cfg = ctx.config
    if state.get("stop_reason"):
        return state["stop_reason"]
    iteration = state.get("iteration", 0)
    if iteration >= cfg.max_iterations:
        return f"iteration budget spent ({iteration} of {cfg.max_iterations} rounds)"
    spent = ctx.tracker.exceeded()
    if spent:
        return f"budget spent: {spent}"
    best = incumbent(state)
    if (
        best is not None
        and best.verdict.score is not None
        and best.verdict.score >= cfg.target_attainment
    ):
        return f"target reached: roofline attainment {best.verdict.score:.2f} >= {cfg.target_attainment:.2f}"
    if best is not None and cfg.first_success:
        return f"first correct kernel (attempt {best.id}) ends the run (agent.first_success)"
    if best is not None and not cfg.optimize:
        return f"correct kernel found (attempt {best.id}); no optimisation (agent.optimize = false)"
    if (
        best is None
        and not cfg.restart
        and state.get("repair_streak", 0) > cfg.max_repairs
        and iteration > 0
    ):
        return f"gave up: {state['repair_streak']} rounds in a row without a correct kernel (agent.max_repairs = {cfg.max_repairs})"
    if best is None:
        return ctx.policy.nothing_left(state)
    return None


def best_summary(
    ctx: RunContext, state: AgentState, best: Attempt | None, reason: str, *, finished: bool
) -> dict[str, Any]:
    attempts = state.get("attempts", [])
    measured = [
        a.measurement for a in attempts if a.measurement is not None and a.measurement.measured
    ]
    scripted = any(m.scripted for m in measured)
    speed = speed_text(best) if best else "no correct kernel"
    if best is not None and ctx.device != "cuda":
        speed = "correct on the CPU interpreter; speed not measured (no GPU)"
    summary: dict[str, Any] = {
        "run_id": ctx.run.run_id,
        "task": ctx.task.id,
        "device": ctx.device,
        "llm": ctx.provider.describe() if ctx.provider else "offline",
        "method": ctx.config.method,
        "finished": finished,
        "finish_reason": reason,
        "best_attempt": best.id if best else None,
        "best_kernel": str(ctx.run.path / "best" / "kernel.py") if best else None,
        "speed": speed,
        "verdict": best.verdict.model_dump() if best else None,
        # where the best kernel came from: the record (agents/core/state.py Provenance) and words
        "provenance": best.provenance.model_dump(mode="json")
        if best is not None and best.provenance is not None
        else None,
        "came_from": best.provenance.sentence()
        if best is not None and best.provenance is not None
        else None,
        "iterations": state.get("iteration", 0),
        "attempts": len(attempts),
        "correct_attempts": sum(1 for a in attempts if a.passed),
        "accepted_improvements": sum(
            1
            for a in attempts
            if a.accepted and a.measurement is not None and a.measurement.measured
        ),
        "measurements": len(measured),
        "measurements_scripted": scripted,
        "pairs": len(ctx.run.pairs()),
        "dropouts": len(state.get("dropouts", [])),
        "nocode_replies": state.get("nocode_errors", 0),
        "budget": ctx.tracker.snapshot(),
        "spend": spend_text(ctx.tracker),
        "run_dir": str(ctx.run.path),
    }
    if scripted:
        summary["note"] = (
            "re-measurements in this run were SCRIPTED by a test seam, not measured on a GPU"
        )
    return summary
