"""optimizer: propose one change to the incumbent, with what it changes and the gain it predicts.

With a model: prompts/optimizer.md.j2 gets the incumbent's code, its timings and roofline
numbers, the profile's diagnosis (Nsight Compute where available) and the visible history; the
reply starts with `CHANGE:` and `PREDICTED_GAIN:` lines, then the module.
Offline: the next configuration of a coordinate search over the entry point's tunables
(agents/offline/policy.py); the search states no gain prediction, since it has no model of one.

The candidate is judged and re-measured by the evaluator. Where nothing can be measured (no GPU)
the optimizer says so and the run finishes with the first correct kernel: no fake speed-ups.
"""

from __future__ import annotations

import re
from typing import Any

from agents.core.ask import ask_for_code
from agents.core.context import RunContext
from agents.core.llm.base import BudgetExceeded
from agents.core.nodes.generator import candidate_key
from agents.core.prompting import history_rows, render, task_contract
from agents.core.state import (
    AgentState,
    Attempt,
    Candidate,
    best_correct,
    incumbent,
    visible_history,
)
from agents.offline import policy as offline

_CHANGE = re.compile(r"^\s*\**CHANGE\**\s*:\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_GAIN = re.compile(
    r"^\s*\**PREDICTED[_ ]GAIN\**\s*:\s*([+-]?\d+(?:\.\d+)?)\s*(%|x|×)?",
    re.IGNORECASE | re.MULTILINE,
)

CANNOT_MEASURE = (
    "nothing can be measured here (no GPU): a faster kernel could not be told from a slower one, "
    "so the run finishes with the first correct kernel"
)


def parse_proposal(text: str) -> tuple[str, float | None]:
    """(what changes, predicted gain as a fraction) from an optimizer reply."""
    change = _CHANGE.search(text)
    gain = _GAIN.search(text)
    predicted = None
    if gain:
        value = float(gain.group(1))
        unit = (gain.group(2) or "%").lower()
        predicted = value - 1.0 if unit in ("x", "×") else value / 100.0
    return (change.group(1).strip() if change else ""), predicted


def optimizer(state: AgentState, ctx: RunContext) -> dict[str, Any]:
    best = incumbent(state)
    if best is None:
        return {"stop_reason": "optimizer reached without a correct kernel (a routing bug)"}
    if not ctx.can_measure:
        ctx.event("optimizer", note=CANNOT_MEASURE)
        ctx.progress.note(f"optimizer: {CANNOT_MEASURE}", style="yellow")
        return {"stop_reason": CANNOT_MEASURE}
    iteration = state.get("iteration", 0) + 1
    if ctx.offline:
        return _offline(state, ctx, best, iteration)
    return _with_model(state, ctx, best, iteration)


def _offline(state: AgentState, ctx: RunContext, best: Attempt, iteration: int) -> dict[str, Any]:
    ref = next((r for r in state.get("references", []) if r["id"] == best.origin), None)
    space = ref["tunables"] if ref else {}
    code = ctx.run.read_code(best)
    current = {
        k: v for k, v in offline.tunable_values(code, ctx.task.entry_point).items() if k in space
    }
    tried = [
        a.tunables for a in state.get("attempts", []) if a.origin == best.origin and a.tunables
    ]
    config = offline.next_config(current, space, tried) if space else None
    if config is None:
        reason = (
            "offline tunable search exhausted: every neighbour of the incumbent's configuration was tried"
            if space
            else "offline policy: the incumbent exposes no tunables to search"
        )
        ctx.event("optimizer", note=reason, incumbent=best.id, configuration=current)
        return {"stop_reason": reason}
    changed = {k: v for k, v in config.items() if current.get(k) != v}
    new_code = offline.set_tunables(code, ctx.task.entry_point, changed)
    change = ", ".join(f"{k}: {current[k]} -> {v}" for k, v in changed.items())
    prompt = (
        f"# offline policy: tunable search\n\nIncumbent attempt {best.id} with {current}.\n"
        f"Profile: {(state.get('profile') or {}).get('diagnosis', 'none')}\n\nTry {change} (coordinate search, nearest value first).\n"
    )
    ctx.event(
        "proposal",
        node="optimizer",
        incumbent=best.id,
        change=change,
        predicted_gain=None,
        note="offline search states no prediction: it has no model of the gain",
    )
    ctx.progress.note(f"optimizer (offline search): {change}")
    return {
        "pending": [
            Candidate(
                key=candidate_key(iteration, 0, "optimize", best.id, new_code),
                slot=0,
                node="optimizer",
                mode="optimize",
                iteration=iteration,
                parent_id=best.id,
                code=new_code,
                prompt=prompt,
                change=change,
                predicted_gain=None,
                origin=best.origin,
                tunables=config,
            )
        ]
    }


def _with_model(
    state: AgentState, ctx: RunContext, best: Attempt, iteration: int
) -> dict[str, Any]:
    task = task_contract(ctx.task)
    device = state.get("device_info") or {"name": ctx.device, "peaks": "not measured"}
    prof = state.get("profile") or {}
    noises = [
        a.measurement.noise
        for a in state.get("attempts", [])
        if a.measurement is not None and a.measurement.measured
    ]
    # GEAK's ancestors (agent.ancestors): the best correct kernels besides the incumbent, in full
    others = best_correct(state, ctx.config.ancestors)[1:]
    ancestors = [
        {**row, "code": ctx.run.read_code(a)}
        for a, row in zip(others, history_rows(others, best.id), strict=True)
    ]
    prompt = render(
        "optimizer.md.j2",
        task=task,
        device=device,
        history=history_rows(visible_history(state, ctx.config.history_window), best.id),
        incumbent={"id": best.id, "code": ctx.run.read_code(best)},
        ancestors=ancestors,
        profile={
            "timing": prof.get("timing", "not measured"),
            "diagnosis": prof.get("diagnosis", "no profile"),
            "ncu": prof.get("ncu"),
        },
        noise=f"{noises[-1]:.1%}" if noises else "",
    )
    system = render("system.md.j2", task=task, device=device)
    try:
        reply = ask_for_code(ctx, "optimizer", system, prompt)
    except BudgetExceeded as exc:
        ctx.event("budget_stop", node="optimizer", reason=str(exc))
        return {"stop_reason": str(exc), **ctx.llm_updates()}
    updates: dict[str, Any] = {"nocode_errors": reply.nocode, **ctx.llm_updates()}
    if reply.code is None:
        ctx.event(
            "optimizer", note=f"no usable code after {reply.nocode} replies; the incumbent stays"
        )
        return updates
    change, predicted = parse_proposal(reply.text)
    ctx.event(
        "proposal",
        node="optimizer",
        incumbent=best.id,
        change=change or "(not stated)",
        predicted_gain=predicted,
        note=""
        if change and predicted is not None
        else "the reply did not state CHANGE and/or PREDICTED_GAIN",
    )
    ctx.progress.note(
        f"optimizer: {change or '(change not stated)'}; predicts {'?' if predicted is None else f'{predicted:+.0%}'}"
    )
    updates["pending"] = [
        Candidate(
            key=candidate_key(iteration, 0, "optimize", best.id, reply.code),
            slot=0,
            node="optimizer",
            mode="optimize",
            iteration=iteration,
            parent_id=best.id,
            code=reply.code,
            prompt=reply.prompt_md,
            reply=reply.reply_md,
            change=change,
            predicted_gain=predicted,
            origin=best.origin,
        )
    ]
    return updates
