"""Acceptance arithmetic of interleaved re-measurement (the GPU timing itself is a GPU test)."""

import math

from benchmarks.harness.remeasure import interleaved, summarize
from benchmarks.task import get_task


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


def test_cpu_says_not_measured():
    task = get_task("softmax_fp32")
    r = interleaved(task, "x", "y", device="cpu")
    assert not r.measured and "not measured" in r.reason
