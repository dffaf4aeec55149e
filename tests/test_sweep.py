"""The sweep (benchmarks/harness/sweep.py, worker.run_sweep) on the CPU: without a GPU it says
"not measured" and gives no number; the static check drops a hostile configuration before
anything runs; an answer from the worker (which runs candidate code) that cannot be ranked is
refused; the score is the weighted geometric mean; and the worker's loop itself, run in this
process on the Triton interpreter with a stand-in clock, records a failing configuration with
its reason and goes on to the next."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from benchmarks.harness import sweep as sweep_module
from benchmarks.harness.messages import ShapeSpec, SweepJob, SweepResult, SweepTiming
from benchmarks.harness.sweep import sweep, weighted_score
from benchmarks.harness.worker import run_sweep
from benchmarks.loading import get_task
from knowledge_base import solution_path

GOOD = solution_path("silu").read_text()
WRONG = GOOD.replace("y = x / (1.0 + tl.exp(-x))", "y = x / (1.0 + tl.exp(x))")
HOSTILE = "import os\nos.system('touch /tmp/kf-sweep-never')\n" + GOOD
RAISES = GOOD.replace("    x = x.contiguous()\n", "    raise RuntimeError('no kernel today')\n", 1)
# calls the good kernel, then zeroes its input
WRITES = GOOD.replace("def silu(", "def _silu(", 1) + (
    "\n\ndef silu(x, BLOCK=4096, num_warps=8):\n    y = _silu(x)\n    x.zero_()\n    return y\n"
)


@pytest.fixture(scope="module")
def task():
    return get_task("silu_fp32")


def configs(n: int) -> list[dict[str, Any]]:
    return [{"BLOCK": 256 << i} for i in range(n)]


def test_a_sweep_without_a_gpu_says_not_measured_and_gives_no_number(task) -> None:
    got = sweep(task, [GOOD, WRONG], configs(2), device="cpu")
    assert not got.measured and got.reason.startswith("not measured (no GPU)")
    assert [e.index for e in got.entries] == [0, 1]
    assert all(e.score is None and not e.times_us for e in got.entries)
    assert got.shapes == [s.name for s in task.shapes]


def test_the_static_check_drops_a_hostile_configuration_before_anything_runs(
    task, monkeypatch
) -> None:
    got = sweep(task, [HOSTILE, GOOD], configs(2), device="cpu")
    hostile = next(e for e in got.entries if e.index == 0)
    assert hostile.error.startswith("static check:") and "os" in hostile.error
    assert next(e for e in got.entries if e.index == 1).error.startswith("not measured")

    seen: dict[str, Any] = {}

    def fake_run_job(device: str, job: SweepJob, **kwargs: Any) -> SweepResult:
        seen.update(job=job, files=kwargs["files"])
        return SweepResult(entries=[SweepTiming(index=0, times_us={s: 2.0 for s in got.shapes})])

    monkeypatch.setattr(sweep_module, "run_job", fake_run_job)
    on_gpu = sweep(task, [HOSTILE, GOOD], configs(2), device="cuda", trusted=True)
    assert list(seen["files"]) == ["cfg_1.py"] and seen["job"].config_paths == ["{folder}/cfg_1.py"]
    assert on_gpu.measured and [e.index for e in on_gpu.entries] == [1, 0]  # failed ones last
    assert on_gpu.entries[0].score == pytest.approx(2.0)
    assert on_gpu.entries[1].error.startswith("static check:")


def _answer(monkeypatch, result: SweepResult) -> None:
    monkeypatch.setattr(sweep_module, "run_job", lambda *a, **k: result)


def test_an_answer_the_worker_cannot_have_measured_is_not_ranked(task, monkeypatch) -> None:
    shapes = [s.name for s in task.shapes]
    good = {s: 1.0 for s in shapes}
    for entries, says in (
        ([SweepTiming(index=0, times_us={**good, shapes[0]: 0.0})], "not positive"),
        ([SweepTiming(index=0, times_us={**good, shapes[0]: math.nan})], "not positive"),
        ([SweepTiming(index=0, times_us={shapes[0]: 1.0})], "not ["),
        ([SweepTiming(index=1, times_us=good)], "not the configurations asked"),
        ([SweepTiming(index=i, times_us=good) for i in range(3)], "3 configurations, 2"),
        ([SweepTiming(index=0, times_us=good)], "1 of 2 configurations"),
    ):
        _answer(monkeypatch, SweepResult(entries=entries))
        got = sweep(task, [GOOD, GOOD], configs(2), device="cuda", trusted=True)
        assert not got.measured and got.reason.startswith("sweep failed: the worker"), got.reason
        assert says in got.reason and all(e.score is None for e in got.entries)


def test_a_sweep_cut_short_keeps_what_it_measured_and_says_why(task, monkeypatch) -> None:
    shapes = [s.name for s in task.shapes]
    broken = SweepResult(entries=[SweepTiming(index=0, times_us={s: 3.0 for s in shapes})])
    broken.fail("crash", "the CUDA context broke at configuration 1 (illegal memory access)")
    _answer(monkeypatch, broken)
    got = sweep(task, [GOOD, WRONG, GOOD], configs(3), device="cuda", trusted=True)
    assert got.measured and got.reason.startswith("the sweep ended early: the CUDA context broke")
    assert [e.index for e in got.entries] == [0, 1, 2] and got.entries[0].measured
    assert got.entries[1].error == got.reason and not got.entries[2].measured

    nothing = SweepResult()
    nothing.fail("", "sweep job ran past 300 s and was killed")
    _answer(monkeypatch, nothing)
    got = sweep(task, [GOOD], configs(1), device="cuda", trusted=True)
    assert (
        not got.measured and got.reason == "sweep failed: sweep job ran past 300 s and was killed"
    )


def test_the_score_is_the_weighted_geometric_mean_of_the_shapes() -> None:
    # exp((3 ln 10 + 1 ln 40) / 4) = 10^(3/4) 40^(1/4) = 10 * 4^(1/4) = 10 sqrt(2)
    assert weighted_score({"a": 10.0, "b": 40.0}, ["a", "b"], [3.0, 1.0]) == pytest.approx(
        10 * math.sqrt(2)
    )
    # a shape of weight 0 does not count; no weight at all: every shape alike
    assert weighted_score({"a": 10.0, "b": 40.0}, ["a", "b"], [1.0, 0.0]) == pytest.approx(10.0)
    assert weighted_score({"a": 10.0, "b": 40.0}, ["a", "b"], [0.0, 0.0]) == pytest.approx(20.0)


def test_the_worker_records_a_failing_configuration_and_goes_on(task, tmp_path: Path) -> None:
    sources = {
        "good": GOOD,
        "wrong": WRONG,
        "raises": RAISES,
        "writes": WRITES,
        "syntax": "def silu(x:\n",
        "good_again": GOOD.replace("BLOCK: int = 4096", "BLOCK: int = 512"),
    }
    paths = []
    for name, text in sources.items():
        (tmp_path / f"{name}.py").write_text(text)
        paths.append(str(tmp_path / f"{name}.py"))
    shapes = [ShapeSpec(name=s.name, dims=dict(s.dims)) for s in task.cpu_shapes]
    job = SweepJob(
        task_path=str(task.path),
        dtype=task.dtype,
        device="cpu",
        config_paths=paths,
        shapes=shapes,
        seed=11,
        warmup_ms=0.0,
        rep_ms=1.0,
        max_reps=1,
    )
    calls: list[int] = []

    def clock(call: Any, job: SweepJob) -> float:  # stands for time_cuda: calls once
        call()
        calls.append(1)
        return 7.5

    events: list[Any] = []
    result = run_sweep(job, tmp_path, events.append, timer=clock)
    assert not result.failed, result.message
    by_name = dict(zip(sources, result.entries, strict=True))
    assert [e.index for e in result.entries] == list(range(len(sources)))
    for name in ("good", "good_again"):
        assert not by_name[name].error and by_name[name].times_us == {s.name: 7.5 for s in shapes}
    assert all(e.seconds > 0 for e in result.entries)  # each configuration's own wall time
    measured = [e for e in result.entries if not e.error]
    per_shape = {f"first_call:{s.name}" for s in shapes}
    assert all(
        set(e.phases) == {"load", "first_call", "check", "time"} | per_shape for e in measured
    )
    whole = [{k: v for k, v in e.phases.items() if ":" not in k} for e in measured]
    assert all(sum(p.values()) <= e.seconds + 1e-3 for p, e in zip(whole, measured, strict=True))
    # each shape's share of the first call, within the phase that holds it
    assert all(
        sum(e.phases[k] for k in per_shape) <= e.phases["first_call"] + 1e-3 for e in measured
    )
    assert "off by up to" in by_name["wrong"].error
    assert "RuntimeError: no kernel today" in by_name["raises"].error
    assert "wrote its input(s) [0]" in by_name["writes"].error
    assert by_name["syntax"].error.startswith("import failed: SyntaxError")
    assert len(calls) == 2 * len(shapes)  # only the correct configurations were timed


def test_the_working_copies_are_refilled_not_reallocated() -> None:
    """Each configuration is called on working copies made once per shape and refilled from
    the pristine inputs (a new clone per configuration was a driver allocation each time once
    the cache was emptied); a copy a configuration resized is cloned anew. After a configuration
    that writes its input, the next one still gets the pristine values (the test above: `writes`,
    then `good_again`)."""
    import torch

    from benchmarks.harness.worker import _refill

    pristine = (torch.arange(6.0), 3, torch.ones(2, 2))
    work = _refill(None, pristine)
    assert work[1] == 3 and work[0] is not pristine[0] and torch.equal(work[0], pristine[0])
    work[0].mul_(5)
    work[2].resize_(3)
    again = _refill(work, pristine)
    assert again[0] is work[0] and torch.equal(again[0], pristine[0])  # refilled in place
    assert again[2] is not work[2] and torch.equal(again[2], pristine[2])  # resized: a new clone
