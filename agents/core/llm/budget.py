"""Budgets: how many tokens, dollars, seconds and GPU seconds a run may spend.

    tracker = BudgetTracker(Budget(max_tokens=200_000, max_cost_usd=2.0, max_wall_s=1800))
    tracker.check()                      # before a call: raises BudgetExceeded once spent
    completion = provider.complete(...)
    tracker.record(completion)           # tokens, cost, LLM latency
    tracker.add_gpu_s(verdict_gpu_time)  # the caller adds GPU time it measured
    tracker.exceeded()                   # None, or which limit is spent, in words
    json.dump(tracker.snapshot(), ...)   # for the run directory

A limit is spent when usage reaches it (>=). Calls whose model has no known price count as
zero dollars: the snapshot reports them as `unpriced_calls`, so a cost total is a lower bound
whenever that number is not zero. Wall time runs from the tracker's creation; a resumed run
carries the time already spent through `BudgetTracker.from_snapshot`. The tracker is
thread-safe (parallel generator calls record concurrently).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from agents.core.llm.base import BudgetExceeded, Completion


@dataclass(frozen=True)
class Budget:
    """Limits; None means unlimited."""

    max_tokens: int | None = None
    max_cost_usd: float | None = None
    max_wall_s: float | None = None
    max_gpu_s: float | None = None

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value is not None and value < 0:
                raise ValueError(f"Budget.{name} must be >= 0 or None, got {value}")


class BudgetTracker:
    """Accumulates what a run spends and says when a `Budget` limit is reached."""

    def __init__(
        self,
        budget: Budget | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_s_before: float = 0.0,
    ) -> None:
        """`wall_s_before`: wall time already spent by an earlier process of the same run."""
        self.budget = budget or Budget()
        self._clock = clock
        self._started = clock()
        self._wall_s_before = wall_s_before
        self._lock = threading.Lock()
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost_usd = 0.0
        self.calls = 0
        self.unpriced_calls = 0
        self.scripted_calls = 0
        self.llm_latency_s = 0.0
        self.gpu_s = 0.0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def wall_s(self) -> float:
        return self._wall_s_before + (self._clock() - self._started)

    def record(self, completion: Completion) -> None:
        """Add one call's usage, cost and latency."""
        usage = completion.usage
        with self._lock:
            self.calls += 1
            self.input_tokens += usage.input_tokens
            self.output_tokens += usage.output_tokens
            self.llm_latency_s += completion.latency_s
            if completion.scripted:
                self.scripted_calls += 1
            if usage.cost_usd is None:
                self.unpriced_calls += 1
            else:
                self.cost_usd += usage.cost_usd

    def add_gpu_s(self, seconds: float) -> None:
        """Add GPU time the caller measured (evaluation, profiling)."""
        if seconds < 0:
            raise ValueError(f"GPU seconds must be >= 0, got {seconds}")
        with self._lock:
            self.gpu_s += seconds

    def exceeded(self) -> str | None:
        """Which limit is spent, e.g. "tokens: 10500 used of 10000", or None."""
        b = self.budget
        with self._lock:
            checks = [
                ("tokens", self.tokens, b.max_tokens, "{:d}"),
                ("cost_usd", self.cost_usd, b.max_cost_usd, "${:.4f}"),
                ("wall_s", self.wall_s, b.max_wall_s, "{:.1f} s"),
                ("gpu_s", self.gpu_s, b.max_gpu_s, "{:.1f} s"),
            ]
        for name, used, limit, fmt in checks:
            if limit is not None and used >= limit:
                return f"{name}: {fmt.format(used)} used of {fmt.format(limit)}"
        return None

    def check(self) -> None:
        """Raise BudgetExceeded if any limit is spent."""
        spent = self.exceeded()
        if spent is not None:
            raise BudgetExceeded(f"budget spent: {spent}", limit=spent.split(":", 1)[0])

    def snapshot(self) -> dict[str, Any]:
        """A JSON-serialisable record of limits and usage, for the run directory."""
        with self._lock:
            used = {
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "tokens": self.tokens,
                "cost_usd": round(self.cost_usd, 6),
                "cost_is_lower_bound": self.unpriced_calls > 0,
                "calls": self.calls,
                "unpriced_calls": self.unpriced_calls,
                "scripted_calls": self.scripted_calls,
                "llm_latency_s": round(self.llm_latency_s, 3),
                "wall_s": round(self.wall_s, 3),
                "gpu_s": round(self.gpu_s, 3),
            }
        return {"limits": asdict(self.budget), "used": used, "exceeded": self.exceeded()}

    @classmethod
    def from_snapshot(
        cls, snapshot: dict[str, Any], *, clock: Callable[[], float] = time.monotonic
    ) -> BudgetTracker:
        """Continue counting from a snapshot written by an earlier process (`--resume`)."""
        used = snapshot["used"]
        tracker = cls(Budget(**snapshot["limits"]), clock=clock, wall_s_before=used["wall_s"])
        tracker.input_tokens = used["input_tokens"]
        tracker.output_tokens = used["output_tokens"]
        tracker.cost_usd = used["cost_usd"]
        tracker.calls = used["calls"]
        tracker.unpriced_calls = used["unpriced_calls"]
        tracker.scripted_calls = used["scripted_calls"]
        tracker.llm_latency_s = used["llm_latency_s"]
        tracker.gpu_s = used["gpu_s"]
        return tracker
