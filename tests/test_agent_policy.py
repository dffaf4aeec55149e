"""The nodes ask one policy interface and handle a spent budget in one place: no node branches on
the offline policy, both policies implement every decision, and `budget_stop` turns a
`BudgetExceeded` into the node's stop update."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agents.core.context import policy_for
from agents.core.llm.base import BudgetExceeded
from agents.core.model_policy import ModelPolicy
from agents.core.nodes.budget import budget_stop
from agents.core.nodes.generator import generator
from agents.core.nodes.reflector import reflector
from agents.core.policy import Policy
from agents.core.state import Attempt, VerdictSummary
from agents.offline.policy import OfflinePolicy

ROOT = Path(__file__).resolve().parents[1]


def test_no_node_and_no_routing_branches_on_the_offline_policy() -> None:
    for path in sorted((ROOT / "agents/core/nodes").glob("*.py")):
        assert "offline" not in path.read_text(encoding="utf-8"), (
            f"{path.relative_to(ROOT)} names the offline policy: ask ctx.policy instead"
        )
    for name in ("graph.py", "outcome.py"):
        text = (ROOT / "agents/core" / name).read_text(encoding="utf-8")
        assert not re.search(r"ctx\.offline", text), f"agents/core/{name} branches on ctx.offline"


def test_both_policies_implement_every_decision() -> None:
    decisions = {n for n in dir(Policy) if not n.startswith("_")}
    assert {"generate", "diagnose", "optimize", "write_test", "references"} <= decisions
    for policy in (ModelPolicy(), OfflinePolicy()):
        missing = sorted(n for n in decisions if not hasattr(policy, n))
        assert not missing, f"{type(policy).__name__} lacks {missing}"
    assert isinstance(policy_for(True), OfflinePolicy)
    assert isinstance(policy_for(False), ModelPolicy)
    assert ModelPolicy.repairs and not OfflinePolicy.repairs
    assert ModelPolicy.writes_tests and not OfflinePolicy.writes_tests


def fake_ctx(policy: Any = None, **config: Any) -> SimpleNamespace:
    events: list[tuple[str, dict[str, Any]]] = []
    return SimpleNamespace(
        events=events,
        event=lambda kind, **fields: events.append((kind, fields)),
        llm_updates=lambda: {"spend": {"used": {"calls": 1}}},
        progress=SimpleNamespace(note=lambda *a, **k: None),
        config=SimpleNamespace(lineage="shared", **config),
        policy=policy,
    )


def spent(*_: Any, **__: Any) -> Any:
    raise BudgetExceeded("budget spent: tokens: 10 used of 5", limit="tokens")


def test_budget_stop_turns_a_spent_budget_into_the_stop_update() -> None:
    ctx = fake_ctx()
    with budget_stop(ctx, "optimizer") as stop:
        spent()
        pytest.fail("the block goes no further once the budget is spent")
    assert stop and stop.reason == "budget spent: tokens: 10 used of 5"
    assert stop.update == {
        "stop_reason": "budget spent: tokens: 10 used of 5",
        "spend": {"used": {"calls": 1}},
    }
    assert ctx.events == [
        ("budget_stop", {"node": "optimizer", "reason": "budget spent: tokens: 10 used of 5"})
    ]


def test_budget_stop_leaves_other_outcomes_alone() -> None:
    ctx = fake_ctx()
    with budget_stop(ctx, "generator") as stop:
        pass
    assert not stop and stop.update == {} and stop.reason is None and ctx.events == []
    with pytest.raises(ValueError), budget_stop(ctx, "generator"):
        raise ValueError("not a budget")
    assert ctx.events == []


def test_nodes_stop_on_a_spent_budget_through_the_one_helper() -> None:
    policy = SimpleNamespace(generate=spent, diagnose=spent)
    ctx = fake_ctx(policy)
    job = {"slot": 0, "mode": "fresh", "iteration": 1}
    assert generator(job, ctx) == {
        "stop_reason": "budget spent: tokens: 10 used of 5",
        "spend": {"used": {"calls": 1}},
    }
    failed = Attempt(
        id=3,
        node="generator",
        mode="fresh",
        iteration=1,
        key="k3",
        code_path="attempts/3/code.py",
        code_sha256="0",
        verdict=VerdictSummary(
            passed=False, error_class="numerical_mismatch", message="off", perf_status="skipped"
        ),
    )
    out = reflector({"attempts": [failed], "last_batch": [3]}, ctx)
    assert out["stop_reason"] == "budget spent: tokens: 10 used of 5"
    assert out["reflection"]["by"] == "rules" and out["reflection"]["attempt_id"] == 3
    assert out["reflections"] == [out["reflection"]]
    assert [kind for kind, _ in ctx.events] == ["budget_stop", "budget_stop"]
