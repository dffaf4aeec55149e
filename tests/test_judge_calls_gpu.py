"""Every call is checked on a CUDA GPU too: the correctness trials of every mode, the untimed
calls on the timing inputs, and each timed call's launches. Run on the device: pytest -m gpu.
(The GPU hostile candidates that skip or swap kernels while timed, tests/hostile/
perf_cache_when_timed.py and calls_switch_when_timed.py, run in tests/test_judge_gpu.py.)"""

from __future__ import annotations

import pytest
import torch
from hostile_manifest import HOSTILE_DIR, parse_header

from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass, Stage
from knowledge_base import solution_path

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]
GPU = JudgeConfig(device="cuda", trials=2, timeout_s=300)


@pytest.mark.parametrize(
    "name", ["calls_switch_after_first", "calls_switch_on_outliers", "calls_pure_python"]
)
def test_a_candidate_falling_back_on_some_calls_fails_on_the_gpu(name: str) -> None:
    case = parse_header(HOSTILE_DIR / f"{name}.py")
    verdict = evaluate(get_task(case.task), case.path, GPU)
    assert verdict.error_class == case.expect, verdict.message
    assert not verdict.passed


def test_a_kernel_body_calling_pytorch_does_not_compile_on_the_gpu() -> None:
    case = parse_header(HOSTILE_DIR / "calls_torch_in_interpreter_launch.py")
    verdict = evaluate(get_task(case.task), case.path, GPU)
    assert not verdict.passed and verdict.error_class != ErrorClass.NONE, verdict.message


@pytest.mark.parametrize(
    ("task", "solution"), [("softmax_fp16", "softmax"), ("softmax_fp32", "softmax")]
)
def test_honest_kernels_pass_with_every_timed_call_counted(task: str, solution: str) -> None:
    verdict = evaluate(get_task(task), solution_path(solution), GPU)
    assert verdict.passed and verdict.stage_reached == Stage.NO_FALLBACK, verdict.message
    assert verdict.perf_status.startswith("measured"), verdict.perf_status
    # every timed shape has a time; the derived ragged shape is checked, never timed
    assert all(s.candidate_us for s in verdict.shapes if not s.correctness_only)
    assert "launch_mismatch" not in verdict.flags
