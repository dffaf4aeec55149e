"""The profile node runs Nsight Compute only for a policy that reads counters
(`Policy.uses_counters`): the offline policy's runs skip it, and profile.json and the `profile`
event say so; a model's policy still gets its profile."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


def test_a_policy_that_reads_no_counters_gets_no_ncu_profile(monkeypatch) -> None:
    from agents.core.model_policy import ModelPolicy
    from agents.core.nodes import profile as profile_node
    from agents.core.state import Attempt, VerdictSummary
    from agents.offline.policy import OfflinePolicy

    best = Attempt(
        id=1,
        node="generator",
        mode="fresh",
        iteration=1,
        key="k",
        code_path="attempts/1/code.py",
        code_sha256="0" * 64,
        verdict=VerdictSummary(passed=True, perf_status="measured"),
    )
    written: dict[str, Any] = {}
    logged: list[tuple[str, dict]] = []
    run = SimpleNamespace(
        read_verdict=lambda i: {"shapes": []},
        write_profile=lambda i, r: written.update(r) or "attempts/1/profile.json",
        update_attempt_record=lambda a: None,
    )
    ncu_runs: list[int] = []
    monkeypatch.setattr(profile_node, "run_ncu_on", lambda ctx, a: ncu_runs.append(a.id) or {})
    monkeypatch.setattr("profiling.ncu_available", lambda: True)

    def ctx_for(policy: Any) -> Any:
        return SimpleNamespace(
            device="cuda",
            config=SimpleNamespace(ncu=True),
            policy=policy,
            run=run,
            event=lambda kind, **f: logged.append((kind, f)),
            progress=SimpleNamespace(note=lambda *a, **k: None),
        )

    profile_node.profile({"incumbent_id": 1, "attempts": [best]}, ctx_for(OfflinePolicy()))
    assert not ncu_runs and written["feedback"] == "timing only"
    assert "Nsight Compute skipped" in written["diagnosis"]
    assert written["ncu_skipped"] == profile_node.NCU_UNREAD
    assert logged[-1][0] == "profile" and logged[-1][1]["ncu_skipped"] == profile_node.NCU_UNREAD
    assert ModelPolicy.uses_counters and not OfflinePolicy.uses_counters
    monkeypatch.setattr(
        profile_node, "ncu_text", lambda ncu: "counters"
    )  # the model's policy still gets its profile
    monkeypatch.setattr(
        profile_node,
        "run_ncu_on",
        lambda ctx, a: ncu_runs.append(a.id) or {"diagnosis": "memory-bound", "isolation": "bwrap"},
    )
    profile_node.profile({"incumbent_id": 1, "attempts": [best]}, ctx_for(ModelPolicy()))
    assert ncu_runs == [1] and written["feedback"] == "ncu" and "ncu_skipped" not in logged[-1][1]
