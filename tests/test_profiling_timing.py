"""Timing helpers that need no GPU: statistics, host timing, and the no-GPU refusal."""

from __future__ import annotations

import pytest
import torch

from profiling import timing
from profiling.timing import percentile, summarize_samples, time_cpu, time_cuda


def test_percentile_interpolates_linearly():
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert percentile(values, 50) == 3.0
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 5.0
    # position (5 - 1) * 0.2 = 0.8 between 1 and 2
    assert percentile(values, 20) == pytest.approx(1.8)
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    with pytest.raises(ValueError):
        percentile([], 50)


def test_summarize_samples():
    r = summarize_samples([10.0, 12.0, 11.0, 30.0, 9.0], "test")
    assert r.median_us == 11.0
    assert r.mean_us == pytest.approx(14.4)
    assert r.min_us == 9.0
    assert r.p20_us == pytest.approx(9.8)  # 0.8 of the way from 9 to 10
    assert r.p80_us == pytest.approx(15.6)  # 3.2: 12 + 0.2 * (30 - 12)
    assert r.reps == 5
    assert r.samples_us == [10.0, 12.0, 11.0, 30.0, 9.0]
    assert r.to_dict()["method"] == "test"


def test_time_cpu_measures_host_time():
    calls = []
    r = time_cpu(lambda: calls.append(1), reps=7, warmup=2)
    assert len(calls) == 9
    assert r.reps == 7 and r.median_us > 0
    assert "perf_counter" in r.method


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_time_cuda_refuses_without_a_gpu():
    with pytest.raises(RuntimeError, match="not measured"):
        time_cuda(lambda: None)
    with pytest.raises(RuntimeError, match="not measured"):
        timing.launch_floor_us()


def test_timer_keeps_its_own_references_when_torch_is_patched(monkeypatch):
    """A candidate that patches torch's timing functions cannot change how we measure."""
    real_sync = timing._sync
    real_record = timing._event_record
    real_zero = timing._zero_
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    monkeypatch.setattr(torch.cuda.Event, "record", lambda *a, **k: None)
    monkeypatch.setattr(torch.Tensor, "zero_", lambda self: self)
    assert timing._sync is real_sync and timing._sync is not torch.cuda.synchronize
    assert timing._event_record is real_record
    assert timing._zero_ is real_zero
