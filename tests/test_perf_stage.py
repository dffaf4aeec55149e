"""The perf stage's arithmetic, fed with recorded timings (the timings themselves are GPU tests)."""

import math

from benchmarks.harness import perf
from benchmarks.harness.judge import JudgeConfig
from benchmarks.loading import get_task
from benchmarks.verdict import ShapeResult, Verdict
from profiling.hardware import match_sheet
from profiling.peaks import Peaks


def _peaks() -> dict:
    sheet = match_sheet("NVIDIA H200")
    return Peaks(
        measured=True,
        fingerprint_key="test",
        device_name="NVIDIA H200",
        bandwidth_bytes_per_s=4.0e12,
        matmul_flops_per_s={"bf16": 7.0e14},
        datasheet_name=sheet.name,
        datasheet_bandwidth_bytes_per_s=sheet.bandwidth_bytes_per_s,
        datasheet_flops_per_s={k: v * 1e12 for k, v in sheet.peak_tflops.items()},
        method="test",
        date="2026-11-29",
    ).to_dict()


def recorded_baselines(monkeypatch, base: dict) -> None:
    """Baseline jobs answer with `base` (a recorded measurement) and this process's baseline
    cache starts empty."""
    from benchmarks.harness import baselines

    baselines.forget_memory()
    monkeypatch.setattr(perf, "measure_baselines", lambda *args, **kwargs: base)


def test_fill_perf_computes_speedups_roofline_and_flags(monkeypatch):
    task = get_task("softmax_fp16")
    shapes = list(task.shapes[:2])
    s0, s1 = shapes
    base = {
        "status": "ok",
        "peaks": _peaks(),
        "launch_floor_us": 3.0,
        "shapes": {
            s0.name: {"eager_us": 100.0, "compile_us": 50.0},
            s1.name: {"eager_us": 400.0, "compile_us": 300.0},
        },
    }
    recorded_baselines(monkeypatch, base)
    bytes0 = task.min_bytes(s0.dims)
    roof0_us = bytes0 / 4.0e12 * 1e6  # memory-bound: bytes / measured bandwidth
    cand = {
        "launch_floor_us": 3.0,
        s0.name: {
            "candidate_us": 2 * roof0_us,
            "method": "events",
            "side_stream": False,
            "profile": {"triton_ratio": 1.0},
        },
        # faster than the datasheet bandwidth allows: must be flagged
        s1.name: {
            "candidate_us": task.min_bytes(s1.dims) / 9.0e12 * 1e6,
            "method": "device_wide",
            "side_stream": True,
            "profile": {"triton_ratio": 0.9},
        },
    }
    v = Verdict(task_id=task.id, device="cuda", passed=True)
    v.shapes = [ShapeResult(shape=s.name, dims=s.dims, dtype=task.dtype) for s in shapes]
    impossible = perf.fill_perf(
        v, task, shapes, cand, JudgeConfig(device="cpu", baseline_cache="off")
    )
    assert impossible == [s1.name]
    r0, r1 = v.shapes
    assert math.isclose(r0.speedup_eager, 100.0 / r0.candidate_us)
    assert math.isclose(r0.speedup_compile, 50.0 / r0.candidate_us)
    assert math.isclose(r0.roofline_us, roof0_us, rel_tol=1e-9)
    assert math.isclose(r0.attainment, 0.5, rel_tol=1e-9)
    assert math.isclose(r0.iou, 0.5, rel_tol=1e-9)
    assert "impossible_time" in v.flags and "side_stream" in v.flags
    assert any("below the roofline" in n for n in r1.notes)
    assert math.isclose(v.geomean_speedup_eager, math.sqrt(r0.speedup_eager * r1.speedup_eager))
    assert v.triton_ratio == 0.9
    assert v.perf_status.startswith("measured")
    assert r0.baseline.source == "measured" and r0.baseline.measured_at


def test_a_time_below_the_datasheet_roofline_fails_the_verdict(monkeypatch):
    from types import SimpleNamespace

    from benchmarks.harness import judge
    from benchmarks.verdict import ErrorClass, Stage

    task = get_task("softmax_fp16")
    shapes = list(task.shapes[:2])
    base = {
        "status": "ok",
        "peaks": _peaks(),
        "launch_floor_us": 3.0,
        "shapes": {s.name: {"eager_us": 100.0, "compile_us": 50.0} for s in shapes},
    }
    recorded_baselines(monkeypatch, base)
    bandwidth = {shapes[0].name: 2.0e12, shapes[1].name: 9.0e12}  # the second beats the sheet
    cand = {
        s.name: {"candidate_us": task.min_bytes(s.dims) / bandwidth[s.name] * 1e6, "method": "e"}
        for s in shapes
    }
    v = Verdict(task_id=task.id, device="cuda", passed=True, stage_reached=Stage.NO_FALLBACK)
    v.shapes = [ShapeResult(shape=s.name, dims=s.dims, dtype=task.dtype) for s in shapes]
    job = SimpleNamespace(device="cuda", perf=True)
    result = SimpleNamespace(perf=SimpleNamespace(by_shape_dict=lambda: cand))
    judge._perf(v, task, job, shapes, JudgeConfig(device="cpu", baseline_cache="off"), result)
    assert not v.passed and v.error_class == ErrorClass.IMPOSSIBLE_TIME
    assert shapes[1].name in v.message and shapes[0].name not in v.message
    assert v.stage_reached == Stage.NO_FALLBACK  # every correctness stage passed; perf did not


def test_a_candidate_that_skips_kernels_while_timed_loses_its_time():
    from benchmarks.harness.perf import launch_mismatch

    assert launch_mismatch(2, 200, 100) is None
    assert launch_mismatch(2, 201, 100) is None  # a lazy extra launch is fine
    assert "skipped work" in launch_mismatch(2, 2, 100)
    assert "no Triton kernel" in launch_mismatch(0, 0, 100)
    assert launch_mismatch(None, None, None) is None  # older worker results carry no counts
