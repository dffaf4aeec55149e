"""A class entry point (KernelBench's ModelNew) gets the reference's weights through the module's
own methods, called by the judge outside every traced call: a candidate that overrides them (or
hooks the loading) could compute on the weights there, off the clock and unseen."""

from pathlib import Path

from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.harness.static_check import StaticResult, check_task_candidate
from benchmarks.loading import load_task_file
from benchmarks.verdict import ErrorClass

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TASK = FIXTURES / "kernelbench_forms" / "l2_matmul_divide_sum_scaling.py"
HOSTILE = FIXTURES / "hostile_class" / "load_state_dict_precompute.py"


def test_overriding_what_the_judge_calls_to_load_weights_is_refused() -> None:
    task = load_task_file(TASK)[0]
    result = check_task_candidate(HOSTILE.read_text(), task)
    assert not result.ok and result.error_class == ErrorClass.FORBIDDEN_API
    assert "load_state_dict" in result.message
    hook = "import torch\nclass ModelNew(torch.nn.Module):\n    def __init__(self):\n"
    hook += "        super().__init__()\n        self.register_load_state_dict_post_hook(print)\n"
    assert "register_load_state_dict_post_hook" in check_task_candidate(hook, task).message


def test_past_the_static_check_the_override_is_never_called(monkeypatch) -> None:
    monkeypatch.setattr(  # as if it had found a hole in the static check
        "benchmarks.harness.judge.check_source",
        lambda *a, **k: StaticResult(ok=True, error_class=ErrorClass.NONE, message=""),
    )
    task = load_task_file(TASK)[0]
    verdict = evaluate(task, HOSTILE, JudgeConfig(device="cpu", trials=1, timeout_s=120))
    assert not verdict.passed, verdict.message
