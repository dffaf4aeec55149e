"""The GPU's ragged shape (benchmarks/harness/shapes.py) on the device: every task has one that
its reference accepts, a reference solution passes on it, and it is checked but never timed or
scored. Run on the device: pytest -m gpu tests/test_shapes_gpu.py."""

import pytest
import torch

from benchmarks.harness import shapes
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import get_task, load_all
from knowledge_base import solution_path

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


def _one_dtype_per_task() -> list[str]:
    """A task id per task file: its fp16 variant where it has one, else its first dtype."""
    by_name: dict[str, str] = {}
    for task in load_all().values():
        if task.name not in by_name or task.dtype == "fp16":
            by_name[task.name] = task.id
    return sorted(by_name.values())


TASK_IDS = _one_dtype_per_task()


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_every_task_plans_a_ragged_shape_its_reference_accepts(task_id):
    plan = shapes.plan_shapes(get_task(task_id), "cuda", None, None)
    ragged = [s for s in plan.shapes if s.correctness_only]
    assert len(ragged) == 1, [u.reason for u in plan.unchecked]
    dims = ragged[0].dims
    assert ragged[0].weight == 0 and any(v % shapes.RAGGED for v in dims.values()), dims
    assert shapes.reference_error(get_task(task_id), dims, "cuda") is None


def _with_solution() -> list[str]:
    return [t for t in TASK_IDS if solution_path(get_task(t).name).is_file()]


@pytest.mark.parametrize("task_id", _with_solution())
def test_the_reference_solution_passes_on_the_ragged_shape(task_id):
    task = get_task(task_id)
    ragged, why = shapes.ragged_shape(task, device="cuda")
    assert ragged is not None, why
    config = JudgeConfig(
        device="cuda", trials=1, perf=False, trusted=True, shapes=(ragged.name,), timeout_s=300
    )
    v = evaluate(task, solution_path(task.name), config)
    assert v.passed, v.message
    assert [s.shape for s in v.shapes] == [ragged.name]
    assert v.shapes[0].correctness_only and v.shapes[0].dims == ragged.dims


def test_the_ragged_shape_is_checked_but_never_timed_or_scored():
    v = evaluate(
        get_task("softmax_fp16"),
        solution_path("softmax"),
        JudgeConfig(device="cuda", trials=1, trusted=True),
    )
    assert v.passed and v.perf_status.startswith("measured"), v.message
    ragged = [s for s in v.shapes if s.correctness_only]
    assert len(ragged) == 1 and ragged[0].weight == 0
    assert ragged[0].candidate_us is None and ragged[0].attainment is None
    assert ragged[0].max_abs_err is not None  # compared
    timed = [s for s in v.shapes if not s.correctness_only]
    assert timed and all(s.candidate_us for s in timed)
    assert v.shape_seed is None and ragged[0].shape in v.shape_plan
