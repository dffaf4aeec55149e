"""optimizer: propose one change to the incumbent, with what it changes and the gain it predicts.

The change comes from the run's policy (`ctx.policy.optimize`, agents/core/policy.py): the model
reads the incumbent, its timings, the profile and the history and states `CHANGE:` and
`PREDICTED_GAIN:`; the search without a model tries the next configuration of the entry point's
tunables and states no gain, since it has no model of one. A policy with nothing left to try
ends the run.

The candidate is judged and re-measured by the evaluator. Where nothing can be measured (no GPU)
the optimizer says so and the run finishes with the first correct kernel: no fake speed-ups.
"""

from __future__ import annotations

from typing import Any

from agents.core.context import RunContext
from agents.core.nodes.budget import budget_stop
from agents.core.nodes.generator import candidate_key
from agents.core.state import AgentState, incumbent

CANNOT_MEASURE = (
    "nothing can be measured here (no GPU): a faster kernel could not be told from a slower one, "
    "so the run finishes with the first correct kernel"
)


def optimizer(state: AgentState, ctx: RunContext) -> dict[str, Any]:
    best = incumbent(state)
    if best is None:
        return {"stop_reason": "optimizer reached without a correct kernel (a routing bug)"}
    if not ctx.can_measure:
        ctx.event("optimizer", note=CANNOT_MEASURE)
        ctx.progress.note(f"optimizer: {CANNOT_MEASURE}", style="yellow")
        return {"stop_reason": CANNOT_MEASURE}
    iteration = state.get("iteration", 0) + 1
    with budget_stop(ctx, "optimizer") as stop:
        proposal = ctx.policy.optimize(ctx, state, best)
    if stop:
        return stop.update
    if proposal.code is None:
        ctx.event("optimizer", note=proposal.note, **proposal.logged)
        stops = {"stop_reason": proposal.stop} if proposal.stop else {}
        return {**proposal.updates, **stops}
    ctx.event("proposal", node="optimizer", incumbent=best.id, **proposal.logged)
    ctx.progress.note(proposal.said)
    candidate = proposal.candidate(
        key=candidate_key(iteration, 0, "optimize", best.id, proposal.code),
        node="optimizer",
        mode="optimize",
        iteration=iteration,
        slot=0,
        parent_id=best.id,
        origin=best.origin,
    )
    return {**proposal.updates, "pending": [candidate]}
