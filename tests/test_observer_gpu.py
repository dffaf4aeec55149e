"""The launch observer on a CUDA GPU (benchmarks/harness/observer; built on the device by
scripts/build_observer.sh, which scripts/device_check.sh runs first): honest kernels pass with
their launches counted from outside, and what only the observer can see fails. Run on the
device: pytest -m gpu."""

from __future__ import annotations

import pytest
import torch
from hostile_manifest import HOSTILE_DIR, parse_header

from benchmarks.harness import observer
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.harness.static_check import StaticResult
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass
from knowledge_base import solution_path

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]
GPU = JudgeConfig(device="cuda", trials=2, timeout_s=300)


def test_the_observer_is_built_where_the_gpu_tests_run() -> None:
    assert observer.library() is not None, observer.describe("cuda")


@pytest.mark.parametrize(
    ("task", "solution"),
    [
        ("softmax_fp32", "softmax"),
        ("layernorm_fp16", "layernorm"),
        ("matmul_bf16", "matmul"),
        ("moe_grouped_gemm_bf16", "moe_grouped_gemm"),
    ],
)
def test_honest_kernels_pass_observed(task: str, solution: str) -> None:
    verdict = evaluate(get_task(task), solution_path(solution), GPU)
    assert verdict.passed, verdict.message
    assert verdict.launch_observation.startswith("launches observed"), verdict.launch_observation
    assert "timed: not run" not in verdict.launch_observation


def test_a_marker_launched_by_the_candidate_is_an_evasion() -> None:
    case = parse_header(HOSTILE_DIR / "calls_observer_marker_gpu.py")
    verdict = evaluate(get_task(case.task), case.path, GPU)
    assert verdict.error_class == ErrorClass.TRACE_EVADED, verdict.message
    assert "marker" in verdict.message


def test_pytorch_in_a_replayed_cuda_graph_is_a_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the static check (it forbids CUDA graphs): the replay dispatches no op, so only the
    observer's count of the graph launch shows the work PyTorch did."""
    monkeypatch.setattr(
        "benchmarks.harness.judge.check_source",
        lambda *a, **k: StaticResult(ok=True, error_class=ErrorClass.NONE, message=""),
    )
    case = parse_header(HOSTILE_DIR / "calls_graph_replay_gpu.py")
    verdict = evaluate(get_task(case.task), case.path, GPU)
    assert verdict.error_class == case.unchecked, verdict.message
    assert "graph" in verdict.message


def test_a_side_stream_hidden_from_the_worker_is_an_evasion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the static check (it forbids the monkeypatch): the worker's own look at the streams
    is fooled, so it times on the current stream alone; the observer's per-stream counts show
    the candidate's launches elsewhere while timed. Its timings are then also below the roofline
    (impossible_time, a symptom): the judge asks the observer there too and names the cause."""
    monkeypatch.setattr(
        "benchmarks.harness.judge.check_source",
        lambda *a, **k: StaticResult(ok=True, error_class=ErrorClass.NONE, message=""),
    )
    case = parse_header(HOSTILE_DIR / "calls_side_stream_hidden_gpu.py")
    verdict = evaluate(get_task(case.task), case.path, GPU)
    assert verdict.error_class == case.unchecked, verdict.message
    assert "streams other than" in verdict.message


@pytest.mark.parametrize("name", ["side_stream.py", "side_stream_some_shapes.py"])
def test_an_honest_side_stream_is_timed_device_wide_observed(name: str) -> None:
    """The worker sees the side stream in the candidate's Triton launches (torch.profiler cannot
    run beside the observer) and times device-wide, every shape once any trial used one (the
    second candidate uses a side stream on the prefill shape only); the observer agrees."""
    case = parse_header(HOSTILE_DIR / name)
    verdict = evaluate(get_task(case.task), case.path, GPU)
    assert verdict.passed, verdict.message
    assert "side_stream" in verdict.flags
    assert verdict.launch_observation.startswith("launches observed"), verdict.launch_observation
