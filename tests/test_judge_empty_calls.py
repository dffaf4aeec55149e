"""A call whose result has no elements (an empty input) needs no kernel: the judge computes the
reference itself and, when every tensor it returns is empty, does not ask the call for a Triton
launch. Every other check of the call still holds: PyTorch compute on the empty input is still a
fallback, and a call with elements still needs its kernel.
"""

from pathlib import Path

from benchmarks.harness.calls import judge_call
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.harness.messages import FallbackInfo
from benchmarks.loading import load_task_file
from benchmarks.task import Task

CPU = JudgeConfig(device="cpu", trials=1, timeout_s=120)

TASK = """
import torch
from benchmarks.inputs import elem_size, randn

NAME = "double_rows"
CATEGORY = "math"
DESCRIPTION = "Twice the input; one CPU shape has no rows (written by tests/test_judge_empty_calls.py)."
ENTRY_POINT = "double_rows"
DTYPES = ("fp32",)
SHAPES = [{"name": "gpu", "dims": {"M": 64, "N": 256}, "weight": 1.0, "source": "test"}]
CPU_SHAPES = [{"name": "empty", "dims": {"M": 0, "N": 16}}, {"name": "rows", "dims": {"M": 3, "N": 16}}]
TOLERANCE = {"fp32": {"atol": 1e-6, "rtol": 1e-6}}
FORBIDDEN = ()


def double_rows(x):
    return x * 2


def make_inputs(dims, dtype, mode, gen):
    return (randn((dims["M"], dims["N"]), dtype, gen),)


def flops(dims, dtype):
    return 1.0 * dims["M"] * dims["N"]


def min_bytes(dims, dtype):
    return 2.0 * dims["M"] * dims["N"] * elem_size(dtype)
"""

KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def _double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def double_rows(x, BLOCK: int = 256):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n == 0:
        {empty}
    _double[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
    return y
"""


def _task(tmp_path: Path) -> Task:
    path = tmp_path / "double_rows.py"
    path.write_text(TASK)
    return load_task_file(path)[0]


def _judge(tmp_path: Path, empty: str):
    task = _task(tmp_path)
    assert any(s.dims["M"] == 0 for s in task.cpu_shapes)
    path = tmp_path / "candidate.py"
    path.write_text(KERNEL.replace("{empty}", empty))
    return evaluate(task, path, CPU)


def test_a_call_with_an_empty_result_may_launch_nothing(tmp_path):
    verdict = _judge(tmp_path, "return y")
    assert verdict.passed, f"{verdict.error_class}: {verdict.message}"


def test_pytorch_compute_on_an_empty_input_is_still_a_fallback(tmp_path):
    verdict = _judge(tmp_path, "return x * 2")
    assert not verdict.passed and verdict.error_class == "fallback", verdict.message
    assert "aten ops mul" in verdict.message and "empty" in verdict.message


def test_a_call_with_elements_still_needs_its_kernel():
    """The exemption is the judge's to give, per call: a call with no launch fails unless the
    judge found the reference's result empty; a recorded op or Python read still fails."""
    none = FallbackInfo(compute_ops={}, all_ops={}, launches={}, output_problems=[])
    failure = judge_call(none, "shape rows")
    assert failure is not None and "no Triton kernel ran" in failure.message
    assert judge_call(none, "shape empty", launch_needed=False) is None
    computed = FallbackInfo(compute_ops={}, all_ops={"mul": 1}, launches={}, output_problems=[])
    assert judge_call(computed, "shape empty", launch_needed=False) is not None
    read = FallbackInfo(
        compute_ops={}, all_ops={}, launches={}, output_problems=[], scalar_reads=10_000
    )
    assert judge_call(read, "shape empty", launch_needed=False) is not None


def test_an_empty_call_answered_with_another_dtype_or_shape_fails(tmp_path):
    """Tried as a cheat on the exemption: skip the launch on the empty call and return an
    output the judge must still compare (dtype and shape come from the judge's reference)."""
    wrong_dtype = _judge(tmp_path, "return torch.empty(x.shape, dtype=torch.float64)")
    assert not wrong_dtype.passed, wrong_dtype.message
    wrong_shape = _judge(tmp_path, "return torch.empty((1, x.shape[1]), dtype=x.dtype)")
    assert not wrong_shape.passed, wrong_shape.message
