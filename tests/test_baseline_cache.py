"""The baseline cache (benchmarks/harness/baselines.py): times measured once per (task content,
shape, dtype, seed, device, versions, measuring code), reused from memory and from disk, measured
again when any of those changes, and every shape's result says where its times came from.

The measurement itself is a GPU job; here it is a recorded one that counts its calls."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_perf_stage import _peaks as recorded_peaks  # recorded H200 peaks

from benchmarks.harness import baselines, perf
from benchmarks.harness.judge_config import JudgeConfig
from benchmarks.loading import get_task, load_task_file
from benchmarks.verdict import ShapeResult, Verdict

REPO = Path(__file__).resolve().parents[1]
H200 = {
    "gpu_name": "NVIDIA H200",
    "compute_capability": "9.0",
    "driver_version": "580.1",
    "cuda_version": "13.0",
    "hip_version": None,
    "torch_version": "2.11.0",
    "triton_version": "3.6.0",
}


class Recorded:
    """A baseline job that answers with fixed times and records which shapes it was asked."""

    def __init__(self, status: str = "ok") -> None:
        self.calls: list[list[str]] = []
        self.status = status

    def __call__(self, shapes):
        self.calls.append([s.name for s in shapes])
        if self.status != "ok":
            return {"status": "error", "message": "the baseline worker died"}
        return {
            "status": "ok",
            "peaks": recorded_peaks(),
            "launch_floor_us": 2.5,
            "shapes": {
                s.name: {"eager_us": 10.0 * (i + 1), "compile_us": 5.0 * (i + 1)}
                for i, s in enumerate(shapes)
            },
        }


@pytest.fixture(autouse=True)
def _empty_memory():
    baselines.forget_memory()
    yield
    baselines.forget_memory()


def test_times_are_measured_once_and_reused_from_memory_then_from_disk(tmp_path):
    task = get_task("softmax_fp16")
    shapes = list(task.shapes[:2])
    store = baselines.BaselineStore(tmp_path)
    job = Recorded()
    first = baselines.baselines_for(task, shapes, 0, H200, store, job)
    assert job.calls == [[s.name for s in shapes]]
    assert {o.source for o in first["origins"].values()} == {"measured"}
    second = baselines.baselines_for(task, shapes, 0, H200, store, job)
    assert len(job.calls) == 1  # not measured again
    assert second["shapes"] == first["shapes"]
    assert {o.source for o in second["origins"].values()} == {"memory"}
    baselines.forget_memory()  # as a new process would start
    third = baselines.baselines_for(task, shapes, 0, H200, store, job)
    assert len(job.calls) == 1
    assert {o.source for o in third["origins"].values()} == {"disk"}
    for name, origin in third["origins"].items():
        assert origin.reused and origin.measured_at == first["origins"][name].measured_at
    assert third["peaks"] == first["peaks"] and third["launch_floor_us"] == 2.5


def test_another_process_reuses_the_disk_cache(tmp_path):
    task = get_task("softmax_fp16")
    shapes = list(task.shapes[:2])
    first = baselines.baselines_for(
        task, shapes, 0, H200, baselines.BaselineStore(tmp_path), Recorded()
    )
    script = """
import json, sys
from benchmarks.harness import baselines
from benchmarks.loading import get_task
task = get_task("softmax_fp16")
def no_job(shapes):
    raise SystemExit("measured again")
got = baselines.baselines_for(task, list(task.shapes[:2]), 0, json.loads(sys.argv[1]),
                              baselines.BaselineStore(baselines.cache_folder(sys.argv[2])), no_job)
print(json.dumps({n: [o.source, o.measured_at] for n, o in got["origins"].items()}))
"""
    out = subprocess.run(
        [sys.executable, "-c", script, json.dumps(H200), str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {n: ["disk", o.measured_at] for n, o in first["origins"].items()}


def test_only_the_shapes_the_cache_lacks_are_measured(tmp_path):
    task = get_task("softmax_fp16")
    s0, s1 = task.shapes[:2]
    store = baselines.BaselineStore(tmp_path)
    job = Recorded()
    baselines.baselines_for(task, [s0], 0, H200, store, job)
    got = baselines.baselines_for(task, [s0, s1], 0, H200, store, job)
    assert job.calls == [[s0.name], [s1.name]]
    assert got["origins"][s0.name].source == "memory"
    assert got["origins"][s1.name].source == "measured"


def test_a_changed_task_file_or_version_or_seed_is_measured_again(tmp_path):
    src = REPO / "benchmarks" / "tasks" / "activation" / "silu.py"
    copy = tmp_path / "tasks" / "silu.py"
    copy.parent.mkdir()
    shutil.copyfile(src, copy)
    task = next(t for t in load_task_file(copy) if t.dtype == "fp32")
    shapes = list(task.shapes[:1])
    store = baselines.BaselineStore(tmp_path / "cache")
    job = Recorded()
    baselines.baselines_for(task, shapes, 0, H200, store, job)
    baselines.baselines_for(task, shapes, 0, H200, store, job)
    assert len(job.calls) == 1
    newer_torch = {**H200, "torch_version": "2.12.0"}
    baselines.baselines_for(task, shapes, 0, newer_torch, store, job)
    assert len(job.calls) == 2
    baselines.baselines_for(task, shapes, 1, H200, store, job)  # other inputs
    assert len(job.calls) == 3
    copy.write_text(copy.read_text() + "\n# an edit that changes the file's hash\n")
    edited = next(t for t in load_task_file(copy) if t.dtype == "fp32")
    got = baselines.baselines_for(edited, shapes, 0, H200, store, job)
    assert len(job.calls) == 4
    assert got["origins"][shapes[0].name].source == "measured"


def test_a_failed_measurement_is_not_kept(tmp_path):
    task = get_task("softmax_fp16")
    shapes = list(task.shapes[:1])
    store = baselines.BaselineStore(tmp_path)
    failing = Recorded(status="error")
    got = baselines.baselines_for(task, shapes, 0, H200, store, failing)
    assert got["status"] == "error"
    baselines.baselines_for(task, shapes, 0, H200, store, failing)
    assert len(failing.calls) == 2
    assert not list(tmp_path.rglob("*.json"))


def test_a_failed_torch_compile_is_kept_in_memory_only(tmp_path):
    task = get_task("softmax_fp16")
    shapes = list(task.shapes[:1])
    store = baselines.BaselineStore(tmp_path)

    def no_compile(asked):
        return {
            "status": "ok",
            "peaks": {},
            "shapes": {s.name: {"eager_us": 9.0, "compile_us": None} for s in asked},
        }

    baselines.baselines_for(task, shapes, 0, H200, store, no_compile)
    again = baselines.baselines_for(task, shapes, 0, H200, store, Recorded())
    assert again["origins"][shapes[0].name].source == "memory"
    assert not list(tmp_path.glob("shapes/*.json"))
    baselines.forget_memory()
    job = Recorded()
    baselines.baselines_for(task, shapes, 0, H200, store, job)
    assert job.calls == [[shapes[0].name]]


def test_the_verdict_says_which_baselines_were_reused_and_when(monkeypatch, tmp_path):
    task = get_task("softmax_fp16")
    shapes = list(task.shapes[:2])
    job = Recorded()
    monkeypatch.setattr(perf, "measure_baselines", lambda task, missing, *a, **k: job(missing))
    config = JudgeConfig(device="cuda", baseline_cache=str(tmp_path))

    def judged() -> Verdict:
        v = Verdict(task_id=task.id, device="cuda", passed=True)
        v.shapes = [ShapeResult(shape=s.name, dims=s.dims, dtype=task.dtype) for s in shapes]
        cand = {s.name: {"candidate_us": 4.0, "method": "events"} for s in shapes}
        perf.fill_perf(v, task, shapes, cand, config)
        return v

    fresh = judged()
    assert [s.baseline.source for s in fresh.shapes] == ["measured", "measured"]
    assert not any("reused" in n for n in fresh.notes)
    baselines.forget_memory()
    again = judged()
    assert len(job.calls) == 1
    assert [s.baseline.source for s in again.shapes] == ["disk", "disk"]
    assert [s.eager_us for s in again.shapes] == [s.eager_us for s in fresh.shapes]
    assert [s.speedup_eager for s in again.shapes] == [s.speedup_eager for s in fresh.shapes]
    when = fresh.shapes[0].baseline.measured_at
    assert any("reused" in n and when in n for n in again.notes)
    # the record round-trips, and a verdict written before baselines were cached still loads
    back = Verdict.model_validate_json(again.model_dump_json())
    assert back.shapes[0].baseline == again.shapes[0].baseline
    old = json.loads(again.model_dump_json())
    for shape in old["shapes"]:
        del shape["baseline"]
    assert Verdict.model_validate(old).shapes[0].baseline is None


def test_off_keeps_nothing_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNFORGE_CACHE_DIR", str(tmp_path))
    assert baselines.cache_folder("off") is None
    assert baselines.cache_folder("") == tmp_path / "baselines"
    assert baselines.cache_folder(str(tmp_path / "b")) == tmp_path / "b"
