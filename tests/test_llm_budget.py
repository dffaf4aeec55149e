"""Budget limits, usage accounting, the snapshot for the run directory, and prices."""

from __future__ import annotations

import json

import pytest

from agents.core.llm import Budget, BudgetExceeded, BudgetTracker, Completion, Usage
from agents.core.llm.pricing import PRICES_TAKEN_ON, cost_usd, price_for


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def completion(tokens_in: int, tokens_out: int, cost: float | None, **kw: object) -> Completion:
    usage = Usage(input_tokens=tokens_in, output_tokens=tokens_out, cost_usd=cost)
    return Completion(text="", usage=usage, model="m", provider="p", latency_s=0.5, **kw)


def test_unlimited_budget_is_never_exceeded() -> None:
    tracker = BudgetTracker()
    tracker.record(completion(10**9, 10**9, 10**6))
    tracker.add_gpu_s(10**6)
    assert tracker.exceeded() is None
    tracker.check()


def test_token_limit_reached_at_equality() -> None:
    tracker = BudgetTracker(Budget(max_tokens=1000))
    tracker.record(completion(600, 399, 0.0))
    assert tracker.exceeded() is None
    tracker.record(completion(1, 0, 0.0))
    assert tracker.exceeded() == "tokens: 1000 used of 1000"
    with pytest.raises(BudgetExceeded, match="budget spent: tokens") as caught:
        tracker.check()
    assert caught.value.limit == "tokens"


def test_cost_limit_counts_known_costs_and_flags_unpriced_calls() -> None:
    tracker = BudgetTracker(Budget(max_cost_usd=0.10))
    tracker.record(completion(10, 10, 0.06))
    tracker.record(completion(10, 10, None))
    assert tracker.exceeded() is None
    assert tracker.unpriced_calls == 1
    tracker.record(completion(10, 10, 0.05))
    assert tracker.exceeded() == "cost_usd: $0.1100 used of $0.1000"
    snap = tracker.snapshot()
    assert snap["used"]["cost_is_lower_bound"] is True


def test_wall_and_gpu_limits() -> None:
    clock = FakeClock()
    tracker = BudgetTracker(Budget(max_wall_s=60, max_gpu_s=5), clock=clock)
    tracker.add_gpu_s(4.0)
    clock.now += 59
    assert tracker.exceeded() is None
    tracker.add_gpu_s(1.0)
    assert tracker.exceeded() == "gpu_s: 5.0 s used of 5.0 s"
    tracker = BudgetTracker(Budget(max_wall_s=60), clock=clock)
    clock.now += 61
    with pytest.raises(BudgetExceeded) as caught:
        tracker.check()
    assert caught.value.limit == "wall_s"


def test_negative_gpu_time_and_limits_are_rejected() -> None:
    with pytest.raises(ValueError, match="GPU seconds"):
        BudgetTracker().add_gpu_s(-1)
    with pytest.raises(ValueError, match="max_tokens"):
        Budget(max_tokens=-5)


def test_snapshot_is_json_and_resumes() -> None:
    clock = FakeClock()
    tracker = BudgetTracker(Budget(max_tokens=500, max_wall_s=100), clock=clock)
    tracker.record(completion(100, 50, 0.25))
    tracker.record(completion(10, 5, 0.0, scripted=True))
    tracker.add_gpu_s(2.5)
    clock.now += 30
    snap = json.loads(json.dumps(tracker.snapshot()))
    assert snap["limits"]["max_tokens"] == 500
    assert snap["used"]["tokens"] == 165 and snap["used"]["calls"] == 2
    assert snap["used"]["scripted_calls"] == 1
    assert snap["used"]["cost_usd"] == 0.25 and snap["used"]["gpu_s"] == 2.5
    assert snap["used"]["wall_s"] == 30.0 and snap["exceeded"] is None

    resumed = BudgetTracker.from_snapshot(snap, clock=clock)
    clock.now += 71
    assert resumed.tokens == 165 and resumed.gpu_s == 2.5
    assert resumed.exceeded() == "wall_s: 101.0 s used of 100.0 s"


def test_prices_are_dated_and_unknown_models_cost_none() -> None:
    assert PRICES_TAKEN_ON
    assert cost_usd("openai", "gpt-5.5", 1_000_000, 1_000_000) == pytest.approx(35.0)
    assert cost_usd("anthropic", "claude-haiku-4-5-20251001", 1_000_000, 0) == pytest.approx(1.0)
    assert price_for("openai", "gpt-5.5-2026-04-23") == price_for("openai", "gpt-5.5")
    assert cost_usd("openai", "some-local-model", 10, 10) is None
    assert cost_usd("openai-compatible", "gpt-5.5", 10, 10) is None
    assert cost_usd("anthropic", "claude-sonnet-9", 10, 10) is None
