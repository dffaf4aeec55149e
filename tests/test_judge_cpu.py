"""The judge end to end on the CPU (Triton interpreter): hostile candidates get the verdict their
header names, known-bad starter kernels fail, reference solutions pass, and a crash or a hang
never takes the next evaluation down with it."""

import dataclasses
from pathlib import Path

import pytest
from hostile_manifest import load_hostile

from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import get_task, load_all
from benchmarks.verdict import ErrorClass, Stage
from knowledge_base import solution_path

TESTS = Path(__file__).resolve().parent
DYNAMIC = [c for c in load_hostile() if not c.is_static and not c.gpu]
CPU = JudgeConfig(device="cpu", trials=2, timeout_s=60)


@pytest.mark.parametrize("case", DYNAMIC, ids=lambda c: c.name)
def test_hostile_candidate_gets_its_verdict(case):
    config = JudgeConfig(
        device="cpu", trials=2, timeout_s=8 if case.expect == ErrorClass.TIMEOUT else 60
    )
    verdict = evaluate(get_task(case.task), case.path, config)
    assert verdict.error_class == case.expect, verdict.message
    assert verdict.passed == (case.expect == ErrorClass.NONE)
    if case.stage_reached is not None:
        assert verdict.stage_reached == case.stage_reached, verdict.message
    if case.expect != ErrorClass.NONE:
        assert verdict.message  # says what went wrong


@pytest.mark.parametrize("case", [c for c in load_hostile() if c.is_static], ids=lambda c: c.name)
def test_static_hostile_never_reaches_a_child(case, monkeypatch):
    def no_child(*args, **kwargs):
        raise AssertionError("a statically rejected candidate must not be executed")

    monkeypatch.setattr("benchmarks.harness.judge.acquire", no_child)
    verdict = evaluate(get_task(case.task), case.path, CPU)
    assert verdict.error_class == case.expect
    assert verdict.stage_reached is None


def test_next_evaluation_works_after_a_crash_and_a_hang():
    task = get_task("softmax_fp32")
    crash = evaluate(task, TESTS / "hostile" / "segfault.py", CPU)
    assert crash.error_class == ErrorClass.CRASH
    hang = evaluate(
        task,
        TESTS / "hostile" / "infinite_loop.py",
        JudgeConfig(device="cpu", trials=1, timeout_s=6),
    )
    assert hang.error_class == ErrorClass.TIMEOUT and "killed" in hang.message
    ok = evaluate(task, solution_path("softmax"), CPU)
    assert ok.passed and ok.stage_reached == Stage.NO_FALLBACK
    assert ok.perf_status == "not measured (no GPU)"
    assert all(s.candidate_us is None for s in ok.shapes)


def _past_the_static_check(monkeypatch):
    """Let a candidate through the static stage, as if it had found a hole in it."""
    from benchmarks.harness.static_check import StaticResult

    monkeypatch.setattr(
        "benchmarks.harness.judge.check_source",
        lambda *a, **k: StaticResult(ok=True, error_class=ErrorClass.NONE, message=""),
    )


@pytest.mark.parametrize(
    ("name", "says", "expect"),
    [
        ("forged_progress_line", "unknown event 'all_trials_passed'", ErrorClass.HARNESS_ERROR),
        # json.dumps replaced at import: since 2026-12-07 the worker holds json's namespace
        # (what it calls between a call and its shipped outputs), so the frozen check ends it
        ("forged_result", "replaced: json.dumps", ErrorClass.TRACE_EVADED),
    ],
)
def test_a_candidate_forging_worker_messages_gets_a_harness_verdict(
    monkeypatch, name, says, expect
):
    _past_the_static_check(monkeypatch)
    path = TESTS / "hostile_protocol" / f"{name}.py"
    verdict = evaluate(get_task("softmax_fp32"), path, CPU)
    assert verdict.error_class == expect and not verdict.passed, verdict.message
    assert says in verdict.message
    if expect == ErrorClass.HARNESS_ERROR:
        assert "harness_error" in verdict.flags


STARTER = sorted({t.name: t for t in load_all().values()}.values(), key=lambda t: t.name)
KNOWN_BAD = [t for t in STARTER if (TESTS / "known_bad" / f"{t.name}.py").is_file()]


def _first_checkable(task_name: str):
    """fp32 where the task has it (the interpreter checks it fully), else the first dtype."""
    variants = [t for t in load_all().values() if t.name == task_name]
    return next((t for t in variants if t.dtype == "fp32"), variants[0])


@pytest.mark.parametrize("task", KNOWN_BAD, ids=lambda t: t.name)
def test_known_bad_kernel_fails_and_reference_passes(task):
    task = _first_checkable(task.name)
    bad_path = TESTS / "known_bad" / f"{task.name}.py"
    expect = next(
        line.split(":", 1)[1].strip()
        for line in bad_path.read_text().splitlines()
        if line.startswith("# expect:")
    )
    bad = evaluate(task, bad_path, CPU)
    assert not bad.passed
    assert bad.error_class == ErrorClass(expect), bad.message
    # the reference gets more time and one trial per input mode: an int8 GEMM on drawn shapes
    # takes about a minute in the interpreter on a busy 2-core machine (correctness is what this
    # test checks, not speed; every mode is still tried)
    good = evaluate(
        task, solution_path(task.name), dataclasses.replace(CPU, timeout_s=300, trials=1)
    )
    assert good.passed, good.message


def test_a_softmax_that_never_subtracts_the_max_fails_on_a_small_drawn_shape():
    # shape seed 8 draws shapes so small that, before every outlier input carried a full-scale
    # positive value, none of its few outliers reached exp's overflow and this kernel passed
    # (CI, 2026-12-01: the agent test's replay went astray when its known-bad attempt passed)
    bad = evaluate(
        get_task("softmax_fp32"),
        TESTS / "known_bad" / "softmax.py",
        dataclasses.replace(CPU, trials=1, shape_seed=8),
    )
    assert not bad.passed and bad.error_class == ErrorClass.NAN_INF_MISMATCH, bad.message


def test_verdict_round_trips_through_json():
    from benchmarks.verdict import Verdict

    v = evaluate(get_task("softmax_fp32"), TESTS / "hostile" / "returns_input.py", CPU)
    again = Verdict.model_validate_json(v.model_dump_json())
    assert again == v
    assert again.mismatch is not None and again.mismatch.first_bad_index is not None


def test_a_file_that_is_not_utf8_gets_a_verdict(tmp_path):
    """A candidate in another encoding (latin-1 bytes under a latin-1 cookie) is a syntax_error
    verdict at the static stage, not an exception out of the judge (a red-team pass, 2026-12-08:
    `read_text()` raised UnicodeDecodeError to the caller)."""
    good = (TESTS / "hostile" / "good_softmax.py").read_text()
    path = tmp_path / "latin1.py"
    path.write_bytes(b"# coding: latin-1\n# caf\xe9\n" + good.encode())
    verdict = evaluate(get_task("softmax_fp32"), path, CPU)
    assert verdict.error_class == ErrorClass.SYNTAX_ERROR and not verdict.passed
    assert "UTF-8" in verdict.message and verdict.stage_reached is None
