"""The one place a spent budget becomes a stop: a node asks its policy inside `budget_stop`, and
a `BudgetExceeded` raised there (a model call past a token, cost, wall-time or GPU-time limit)
is logged and turned into the node's stop update instead of an error.

    with budget_stop(ctx, "generator") as stop:
        proposal = ctx.policy.generate(ctx, job)
    if stop:
        return stop.update
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from agents.core.context import RunContext
from agents.core.llm.base import BudgetExceeded


@dataclass
class BudgetStop:
    """Whether the guarded call ran out of budget, and if so the state update that stops the
    run: the reason, the spend and the replay position (`RunContext.llm_updates`)."""

    update: dict[str, Any] = field(default_factory=dict)

    @property
    def reason(self) -> str | None:
        return self.update.get("stop_reason")

    def __bool__(self) -> bool:
        return bool(self.update)


@contextmanager
def budget_stop(ctx: RunContext, node: str) -> Iterator[BudgetStop]:
    """Run the block; on `BudgetExceeded` log a `budget_stop` event for `node` and fill the
    yielded record's `update` with the stop (the block's remaining statements are skipped)."""
    stop = BudgetStop()
    try:
        yield stop
    except BudgetExceeded as exc:
        ctx.event("budget_stop", node=node, reason=str(exc))
        stop.update = {"stop_reason": str(exc), **ctx.llm_updates()}
