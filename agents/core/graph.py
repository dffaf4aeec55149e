"""The agent's graph: every node and every edge, in one place.

    START -> retrieve -> generator x N (Send) -> evaluator
    retrieve -> write_test        agent.llm_tests: the model writes a test first
    write_test -> generator x N
    evaluator -> reflector        a round with no correct kernel
              -> profile          a correct kernel to optimise
              -> dropout          no accepted improvement for k rounds (or every m)
              -> finish           budget spent, target attainment reached, a correct kernel with
                                  agent.first_success or no optimisation, or nothing left to do
    reflector -> generator x N    repair (Send, one per slot); with agent.lineage = per_slot each
                                  slot repairs its own kernel; an approach out of repairs is
                                  followed by a fresh one when agent.restart is on
              -> profile          the incumbent stands and this branch is out of repairs
              -> dropout          ... and no accepted improvement for k rounds
              -> finish
    profile   -> optimizer
    dropout   -> optimizer
    optimizer -> evaluator        a proposal to judge and re-measure
              -> finish           nothing measurable / search exhausted / budget spent
    finish    -> END

Nodes are functions of (state, context) in agents/core/nodes/; the context is bound here with
`functools.partial`. Routing is the small named functions below; each asks
`agents.core.outcome.why_finish` first, so a stop is decided in one place.
"""

from __future__ import annotations

import sqlite3
from functools import partial
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from agents.core.context import RunContext
from agents.core.nodes.dropout import dropout
from agents.core.nodes.evaluator import evaluator
from agents.core.nodes.finish import finish
from agents.core.nodes.generator import GeneratorJob, generator
from agents.core.nodes.optimizer import optimizer
from agents.core.nodes.profile import profile
from agents.core.nodes.reflector import reflector
from agents.core.nodes.retrieve import retrieve
from agents.core.nodes.write_tests import write_test
from agents.core.outcome import why_finish
from agents.core.state import (
    CHECKPOINT_TYPES,
    AgentState,
    Attempt,
    attempt_by_id,
    incumbent,
    latest_batch,
    visible_history,
)

# -- routing ----------------------------------------------------------------------------------


def repair_depth(state: AgentState, attempt: Attempt | None) -> int:
    """How many repairs led to `attempt` since its approach began (a fresh kernel or an
    optimizer proposal has depth 0, its first repair 1, ...)."""
    depth = 0
    while attempt is not None and attempt.mode == "repair":
        depth += 1
        attempt = attempt_by_id(state, attempt.parent_id)
    return depth


def repair_parent(state: AgentState, ctx: RunContext, slot: int) -> Attempt | None:
    """The failed attempt generator slot `slot` repairs, or None for a fresh approach.

    shared lineage: every slot repairs the round's first failure. per_slot lineage: each slot
    repairs its own kernel of the last round; a slot with none (no code, or not judged) writes
    afresh, unless an incumbent exists (then it helps repair the optimizer's failed change).
    With agent.restart and no incumbent, an approach repaired agent.max_repairs times is dropped
    for a fresh one."""
    cfg = ctx.config
    failed = [a for a in latest_batch(state) if not a.passed]
    if not failed:
        return None
    has_incumbent = incumbent(state) is not None
    parent: Attempt | None = failed[0]
    if cfg.lineage == "per_slot":
        own = next((a for a in failed if a.slot == slot), None)
        parent = own if own is not None or not has_incumbent else failed[0]
    if (
        parent is not None
        and cfg.restart
        and not has_incumbent
        and repair_depth(state, parent) >= cfg.max_repairs
    ):
        return None
    return parent


def _reflection_for(state: AgentState, parent: Attempt | None) -> dict[str, Any] | None:
    """The reflector's diagnosis of `parent` (None: the generator falls back to the rules)."""
    if parent is None:
        return state.get("reflection")
    for reflection in [state.get("reflection"), *(state.get("reflections") or [])]:
        if reflection and reflection.get("attempt_id") == parent.id:
            return reflection
    return None


def generator_jobs(state: AgentState, ctx: RunContext, mode: str) -> list[Send]:
    """One Send per parallel generator call, each with everything its prompt needs."""
    tried = sorted({a.origin for a in state.get("attempts", []) if a.origin})
    history = visible_history(state, ctx.config.history_window)
    jobs = []
    for slot in range(ctx.config.candidates):
        parent = repair_parent(state, ctx, slot) if mode == "repair" else None
        shown = history
        if ctx.config.lineage == "per_slot":  # an independent chain sees its own past
            best = state.get("incumbent_id")
            shown = [a for a in history if a.slot == slot or a.id == best]
        job: GeneratorJob = {
            "slot": slot,
            "candidates": ctx.config.candidates,
            "mode": "repair" if parent is not None else "fresh",
            "iteration": state.get("iteration", 0) + 1,
            "parent": parent,
            "reflection": _reflection_for(state, parent),
            "retrieved": state.get("retrieved", []),
            "knowledge_note": state.get("knowledge_note", ""),
            "references": state.get("references", []),
            "tried": tried,
            "history": shown,
            "incumbent_id": state.get("incumbent_id"),
            "device_info": state.get("device_info", {}),
            "model_test": (state.get("model_test") or {}).get("code"),
        }
        jobs.append(Send("generator", job))
    return jobs


def after_retrieve(state: AgentState, ctx: RunContext) -> list[Send] | str:
    """After retrieve (and after write_test): the model's test first when asked, then generate."""
    if why_finish(state, ctx):
        return "finish"
    if ctx.config.llm_tests and ctx.policy.writes_tests and state.get("model_test") is None:
        return "write_test"
    return generator_jobs(state, ctx, "fresh")


def should_drop_out(state: AgentState, ctx: RunContext) -> bool:
    cfg = ctx.config
    if not cfg.dropout or state.get("incumbent_id") is None:
        return False
    iteration = state.get("iteration", 0)
    if any(d["iteration"] == iteration for d in state.get("dropouts", [])):
        return False
    stale = state.get("stale", 0)
    by_stagnation = cfg.dropout_after > 0 and stale > 0 and stale % cfg.dropout_after == 0
    periodic = cfg.dropout_every > 0 and iteration % cfg.dropout_every == 0
    return by_stagnation or periodic


def after_evaluation(state: AgentState, ctx: RunContext) -> str:
    if why_finish(state, ctx):
        return "finish"
    batch = latest_batch(state)
    has_incumbent = incumbent(state) is not None
    if any(a.passed for a in batch):
        if not ctx.config.optimize or ctx.config.first_success:
            return "finish"
        return "dropout" if should_drop_out(state, ctx) else "profile"
    if not batch and has_incumbent:  # the optimizer gave no usable code: ask it again
        return "profile" if ctx.config.optimize else "finish"
    return "reflector"


def after_reflection(state: AgentState, ctx: RunContext) -> list[Send] | str:
    if why_finish(state, ctx):
        return "finish"
    cfg = ctx.config
    failed = [a for a in latest_batch(state) if not a.passed]
    if incumbent(state) is not None:
        out_of_repairs = state.get("repair_streak", 0) > cfg.max_repairs or cfg.max_repairs == 0
        if not ctx.policy.repairs or not failed or out_of_repairs:
            # the optimizer's change failed and is not worth repairing: back to the incumbent
            if not cfg.optimize:
                return "finish"
            return "dropout" if should_drop_out(state, ctx) else "profile"
        return generator_jobs(state, ctx, "repair")
    if not ctx.policy.repairs or not failed or cfg.max_repairs == 0:
        return generator_jobs(state, ctx, "fresh")
    return generator_jobs(state, ctx, "repair")


def after_optimizer(state: AgentState, ctx: RunContext) -> str:
    # No proposal without a stop reason (no usable code) still goes to the evaluator: the empty
    # round counts against the iteration budget, so the loop is bounded.
    return "finish" if state.get("stop_reason") else "evaluator"


# -- wiring -------------------------------------------------------------------------------------


def build_graph(ctx: RunContext) -> StateGraph:
    graph = StateGraph(AgentState)
    for name, node in (
        ("retrieve", retrieve),
        ("write_test", write_test),
        ("generator", generator),
        ("evaluator", evaluator),
        ("reflector", reflector),
        ("profile", profile),
        ("optimizer", optimizer),
        ("dropout", dropout),
        ("finish", finish),
    ):
        graph.add_node(name, partial(node, ctx=ctx))
    graph.add_edge(START, "retrieve")
    graph.add_conditional_edges(
        "retrieve", partial(after_retrieve, ctx=ctx), ["write_test", "generator", "finish"]
    )
    graph.add_conditional_edges(
        "write_test", partial(after_retrieve, ctx=ctx), ["generator", "finish"]
    )
    graph.add_edge("generator", "evaluator")
    graph.add_conditional_edges(
        "evaluator",
        partial(after_evaluation, ctx=ctx),
        ["reflector", "profile", "dropout", "finish"],
    )
    graph.add_conditional_edges(
        "reflector",
        partial(after_reflection, ctx=ctx),
        ["generator", "profile", "dropout", "finish"],
    )
    graph.add_edge("profile", "optimizer")
    graph.add_edge("dropout", "optimizer")
    graph.add_conditional_edges(
        "optimizer", partial(after_optimizer, ctx=ctx), ["evaluator", "finish"]
    )
    graph.add_edge("finish", END)
    return graph


def checkpointer(path: Path) -> SqliteSaver:
    """A SQLite checkpoint that rebuilds only our own state records (nothing else is unpickled)."""
    conn = sqlite3.connect(str(path), check_same_thread=False)
    allowed = [(t.__module__, t.__name__) for t in CHECKPOINT_TYPES]
    return SqliteSaver(conn, serde=JsonPlusSerializer(allowed_msgpack_modules=allowed))


def compile_graph(ctx: RunContext) -> Any:
    """The graph with the run's checkpoint; its connection closes with the run (`RunDir.close`)."""
    saver = checkpointer(ctx.run.checkpoint)
    ctx.run.on_close(saver.conn.close)
    return build_graph(ctx).compile(checkpointer=saver)


def invoke_config(ctx: RunContext) -> dict[str, Any]:
    # Each round is at most ~5 supersteps (evaluator, reflector/profile/dropout, optimizer/generator).
    return {
        "configurable": {"thread_id": ctx.run.run_id},
        "recursion_limit": 12 * ctx.config.max_iterations + 50,
    }
