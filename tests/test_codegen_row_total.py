"""The code generator's row>total split: reductions over the row, then a reduction of their
per-row results to one value (a loss), as two kernels. The shipped losses pass the CPU judge,
long rows too, and what the split cannot carry is refused by name.

fp32 and fp16 only: the interpreter computes bf16 arithmetic wrongly.
"""

import pytest

from agents.offline.codegen.translate import NotSupported, generate
from agents.offline.policy import set_tunables
from benchmarks.loading import get_task
from tests.test_codegen import _judge, _probe


@pytest.mark.parametrize(
    "task_id",
    [
        "cross_entropy_fp32",
        "cross_entropy_fp16",
        "cross_entropy_label_smoothing_fp16",
    ],
)
def test_losses_over_rows_pass_the_judge(task_id, tmp_path):
    task = get_task(task_id)
    gen = generate(task)
    assert gen.structure == "row>total"
    assert "Stage 1 writes one value per row" in gen.source
    _judge(task, gen.source, tmp_path)


def test_a_long_row_loss_takes_the_looped_first_stage(tmp_path):
    task = get_task("cross_entropy_label_smoothing_fp32")
    source = set_tunables(generate(task).source, task.entry_point, {"MAX_BLOCK_N": 16})
    assert (
        "kernel, BLOCK_N = _cross_entropy_label_smoothing_s0_looped_kernel, MAX_BLOCK_N" in source
    )
    _judge(task, source, tmp_path)


def test_one_per_row_value_crosses_between_the_stages(tmp_path):
    two = _probe(tmp_path, "return x.amax(dim=-1).mean() + (x * x).sum(dim=-1).amax()")
    with pytest.raises(NotSupported, match="carries exactly one"):
        generate(two)
    task = _probe(tmp_path, "return (x.amax(dim=-1) - x.mean(dim=-1)).mean()")
    gen = generate(task)
    assert gen.structure == "row>total"
    _judge(task, gen.source, tmp_path)


def test_returning_the_per_row_values_too_is_refused(tmp_path):
    task = _probe(tmp_path, "r = x.amax(dim=-1)\nreturn r, r.sum()")
    with pytest.raises(NotSupported, match="returns the reduction only"):
        generate(task)
