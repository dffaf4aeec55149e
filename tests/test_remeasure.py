"""Acceptance arithmetic of interleaved re-measurement (the GPU timing itself is a GPU test)."""

import math

from benchmarks.harness.remeasure import interleaved, summarize
from benchmarks.loading import get_task


def test_gain_beyond_noise_is_significant():
    times = {
        "incumbent": {"a": [100.0, 102.0, 101.0, 100.0], "b": [50.0, 50.5, 50.0, 50.2]},
        "candidate": {"a": [80.0, 81.0, 80.0, 80.5], "b": [40.0, 40.2, 40.1, 40.0]},
    }
    r = summarize(times)
    # medians (upper of the middle two): a 101 vs 80.5, b 50.2 vs 40.1
    expected = math.sqrt((101.0 / 80.5) * (50.2 / 40.1)) - 1
    assert math.isclose(r.gain, expected, rel_tol=1e-12)
    assert math.isclose(r.noise, 2.0 / 100.0)
    assert r.significant


def test_gain_inside_noise_is_rejected():
    times = {"incumbent": {"a": [100.0, 110.0]}, "candidate": {"a": [98.0, 104.0]}}
    r = summarize(times)
    assert r.gain > 0 and not r.significant


def test_one_noisy_shape_does_not_hide_a_clear_gain_on_another():
    # the serving run's linear_bf16 attempt 2 (H200, 2026-12-03) in miniature: a decode shape
    # 10 % faster with a 1 % spread, prefill shapes level, one of them noisy (one slow sample)
    times = {
        "incumbent": {"prefill": [690.0, 700.0, 695.0, 930.0], "decode": [18.7, 18.8, 18.7, 18.8]},
        "candidate": {"prefill": [694.0, 696.0, 700.0, 701.0], "decode": [16.8, 16.9, 16.8, 16.85]},
    }
    r = summarize(times)
    assert r.noise > 0.3  # the old rule compared every gain with this and rejected
    assert r.shape_noise[1] < 0.01 and r.shape_gain[1] > 0.1
    assert r.significant and "faster beyond its noise on decode" in r.why


def test_a_shape_slower_beyond_its_noise_vetoes_the_candidate():
    times = {
        "incumbent": {"a": [100.0, 100.5], "b": [50.0, 50.1]},
        "candidate": {"a": [70.0, 70.2], "b": [55.0, 55.1]},  # a much faster, b 10 % slower
    }
    r = summarize(times)
    assert r.gain > 0 and not r.significant and r.why == "slower beyond its noise on b"


def test_the_overall_gain_is_weighted_like_the_score():
    times = {
        "incumbent": {"light": [10.0, 10.01], "heavy": [100.0, 108.0]},
        "candidate": {"light": [8.0, 8.01], "heavy": [104.0, 104.5]},  # heavy: within its noise
    }
    equal = summarize(times)
    assert equal.significant  # 25 % on light, -3.4 % on heavy (noise 8 %): +9.8 % overall
    weighted = summarize(times, weights={"light": 0.05, "heavy": 0.95})
    expected = math.exp(0.05 * math.log(10.01 / 8.01) + 0.95 * math.log(108.0 / 104.5)) - 1
    assert math.isclose(weighted.gain, expected, rel_tol=1e-12)
    times["candidate"]["heavy"] = [109.0, 109.5]  # now -1.4 % on the shape that matters
    weighted = summarize(times, weights={"light": 0.05, "heavy": 0.95})
    assert not weighted.significant and "overall" in weighted.why


def test_cpu_says_not_measured():
    task = get_task("softmax_fp32")
    r = interleaved(task, "x", "y", device="cpu")
    assert not r.measured and "not measured" in r.reason


def test_one_record_for_the_fact_stored_by_the_agent_with_its_scripted_label():
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    from agents.core.state import CHECKPOINT_TYPES, Attempt, Measurement, VerdictSummary
    from benchmarks.harness.remeasure import Remeasure

    assert Measurement is Remeasure  # the agent stores the harness's record, no copy
    m = summarize({"incumbent": {"a": [10.0, 10.1]}, "candidate": {"a": [8.0, 8.1]}})
    m = m.model_copy(update={"incumbent_id": 3, "scripted": True})
    a = Attempt(
        id=4,
        node="optimizer",
        mode="optimize",
        iteration=1,
        key="k",
        code_path="attempts/4/kernel.py",
        code_sha256="0" * 64,
        verdict=VerdictSummary(passed=True),
        measurement=m,
    )
    back = Attempt.model_validate_json(a.model_dump_json())  # as attempt.json stores it
    assert back == a and back.measurement.scripted and back.measurement.shapes == ["a"]
    allowed = [(t.__module__, t.__name__) for t in CHECKPOINT_TYPES]
    serde = JsonPlusSerializer(allowed_msgpack_modules=allowed)  # as the checkpoint stores it
    assert serde.loads_typed(serde.dumps_typed(a)) == a


def test_timings_the_worker_cannot_have_measured_are_not_summarised(monkeypatch):
    from benchmarks.harness import remeasure
    from benchmarks.harness.messages import RemeasureResult

    task = get_task("softmax_fp32")
    for times in (
        {"incumbent": {"a": [1.0]}},
        {"incumbent": {"a": [1.0]}, "candidate": {"b": [1.0]}},
        {"incumbent": {"a": [1.0]}, "candidate": {"a": [0.0]}},
    ):
        monkeypatch.setattr(remeasure, "run_job", lambda *a, t=times, **k: RemeasureResult(times=t))
        r = interleaved(task, "x", "y", device="cuda")
        assert not r.measured and r.reason.startswith("re-measurement failed: the worker returned")
