"""Every call is checked, and the judge decides (CPU interpreter): hostile candidates that fall
back to PyTorch only on some calls, hide work from the in-process tracers, or patch the worker's
checks get the verdict their header names.

Candidates whose header carries `# unchecked: <error class>` import what the static check forbids
(sys, threading, torch._C); they are run past the static check too, as if they had found a hole in
it, and must then get that error class from the layers behind it."""

from __future__ import annotations

import pytest
from hostile_manifest import HOSTILE_DIR, HostileCase, parse_header

from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass

CONFIG = JudgeConfig(device="cpu", trials=2, timeout_s=120)


CASES = [c for c in map(parse_header, sorted(HOSTILE_DIR.glob("calls_*.py"))) if not c.gpu]
UNCHECKED = [(c, c.unchecked) for c in CASES if c.unchecked is not None]


@pytest.mark.parametrize("case", [c for c in CASES if not c.is_static], ids=lambda c: c.name)
def test_a_call_that_falls_back_or_hides_is_caught(case: HostileCase) -> None:
    verdict = evaluate(get_task(case.task), case.path, CONFIG)
    assert verdict.error_class == case.expect, verdict.message
    assert not verdict.passed and verdict.message


@pytest.mark.parametrize(("case", "expect"), UNCHECKED, ids=lambda c: getattr(c, "name", ""))
def test_past_the_static_check_the_judge_still_decides(
    case: HostileCase, expect: ErrorClass, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.harness.static_check import StaticResult

    monkeypatch.setattr(
        "benchmarks.harness.judge.check_source",
        lambda *a, **k: StaticResult(ok=True, error_class=ErrorClass.NONE, message=""),
    )
    verdict = evaluate(get_task(case.task), case.path, CONFIG)
    assert verdict.error_class == expect, verdict.message
    # `none`: the attack is neutralised (what it set up never runs) and the candidate, left to
    # compute honestly, passes
    assert verdict.passed == (expect == ErrorClass.NONE)
    assert verdict.passed or verdict.message
