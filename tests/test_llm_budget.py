"""Budget limits, usage accounting, the snapshot for the run directory, and prices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.core.llm import Budget, BudgetExceeded, BudgetTracker, Completion, Usage
from agents.core.llm.pricing import PRICES_TAKEN_ON, Price, cost_usd, price_for


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


# ---- reservations: a call is made only when its worst case fits ----


def test_a_reservation_caps_the_reply_to_what_is_left_and_settles_to_the_real_usage() -> None:
    tracker = BudgetTracker(Budget(max_tokens=5000))
    tracker.record(completion(1000, 1000, 0.0))
    held = tracker.reserve("generator", ["p" * 900], max_tokens=8192, price=None)
    assert held.input_tokens == 300 + 16  # 900 bytes at 1/3 token a byte, plus two messages' 8
    assert held.max_tokens == 5000 - 2000 - held.input_tokens
    tracker.settle(held, completion(200, 2500, 0.0))
    assert tracker.tokens == 4700 and tracker.in_flight == [] and tracker.overruns == 0


def test_a_cost_reservation_prices_input_and_the_reply_cap() -> None:
    price = Price(input_per_mtok=5.0, output_per_mtok=30.0)
    tracker = BudgetTracker(Budget(max_cost_usd=0.02))
    held = tracker.reserve("generator", ["p" * 3000], max_tokens=8192, price=price)
    assert held.cost_usd is not None and held.cost_usd <= 0.02
    assert held.max_tokens == int((0.02 - held.input_tokens * 5e-6) / 30e-6) == 497
    tracker.release(held)
    # 3016 input tokens cost $0.0151: the $0.0049 left buys 164 reply tokens, under the 256
    with pytest.raises(BudgetExceeded, match="not made") as caught:
        tracker.reserve("generator", ["p" * 9000], max_tokens=8192, price=price)
    assert caught.value.limit == "cost_usd" and tracker.in_flight == []


def test_the_estimate_rises_to_what_a_server_counted() -> None:
    tracker = BudgetTracker(Budget(max_tokens=100_000))
    held = tracker.reserve("generator", ["p" * 1000], max_tokens=100, price=None)
    tracker.settle(held, completion(600, 10, 0.0))  # a tokenizer at 0.6 token a byte
    assert tracker.overruns == 1  # 610 tokens against a hold of 316 + 100: said, and learnt
    assert tracker.tokens_per_byte == pytest.approx(0.66)
    assert tracker.estimate_input(["p" * 1000])[0] == 660 + 16
    scripted = tracker.reserve("generator", ["p" * 1000], max_tokens=100, price=None)
    estimated = Usage(input_tokens=5000, output_tokens=1, estimated=True)
    tracker.settle(
        scripted, Completion(text="", usage=estimated, model="m", provider="p", latency_s=0.1)
    )
    assert tracker.tokens_per_byte == pytest.approx(0.66)  # a guessed count teaches nothing
    assert tracker.overruns == 2  # 5001 tokens against a hold of 776


def test_the_ledger_is_on_disk_before_the_call_and_a_resume_counts_what_was_in_flight(
    tmp_path: Path,
) -> None:
    ledger = tmp_path / "budget.json"
    tracker = BudgetTracker(Budget(max_tokens=10_000), ledger=ledger)
    tracker.record(completion(100, 50, 0.0))
    held = tracker.reserve("reflector", ["p" * 300], max_tokens=2048, price=None)
    on_disk = json.loads(ledger.read_text())
    assert on_disk["used"]["calls"] == 1 and on_disk["in_flight"][0]["id"] == held.id
    # the process dies here; the next one resumes from the ledger
    resumed, note = BudgetTracker.resume(Budget(max_tokens=20_000), ledger, None)
    assert resumed.calls == 2 and resumed.interrupted_calls == 1
    assert resumed.tokens == 150 + held.input_tokens + held.max_tokens
    assert resumed.budget.max_tokens == 20_000 and resumed.in_flight == []
    assert note is not None and note.startswith("1 model call(s) were in flight")
    again, note = BudgetTracker.resume(Budget(max_tokens=20_000), ledger, None)
    assert again.calls == 2 and note is None  # counted once, not at every resume


def test_an_unreadable_ledger_falls_back_to_the_checkpoint_and_says_so(tmp_path: Path) -> None:
    ledger = tmp_path / "budget.json"
    ledger.write_text('{"limits": {"max_tokens": 10')
    checkpoint = BudgetTracker(Budget(max_tokens=10)).snapshot()
    checkpoint["used"]["calls"] = 4
    tracker, note = BudgetTracker.resume(Budget(max_tokens=99), ledger, checkpoint)
    assert tracker.calls == 4 and tracker.budget.max_tokens == 99
    assert note is not None and note.startswith(f"{ledger}: unreadable (JSONDecodeError")
    assert json.loads(ledger.read_text())["used"]["calls"] == 4  # rewritten whole
