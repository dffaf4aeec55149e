"""Row programs whose columns are independent (no reduction, no scan) split each row over
programs of BLOCK_C columns; through the CPU judge with tiles narrower than the CPU shapes' rows
(so a row takes several programs and the last tile is masked), and kept whole-row where a
reduction or a scan needs the row in one program."""

from __future__ import annotations

import pytest

from agents.offline.codegen.translate import generate
from agents.offline.policy import set_tunables, tunable_values
from benchmarks.loading import get_task
from tests.test_codegen import _judge


@pytest.mark.parametrize(
    "task_id",
    ["silu_and_mul_fp16", "embedding_fp16", "gather_lastdim_fp16"],  # halves, lookup, gather
)
def test_independent_columns_split_rows_over_programs(task_id, tmp_path):
    task = get_task(task_id)
    gen = generate(task)
    assert gen.structure == "row"
    values = tunable_values(gen.source, task.entry_point)
    assert "BLOCK_C" in values and "MAX_BLOCK_N" not in values
    assert "tl.program_id(1) * BLOCK_N" in gen.source
    _judge(task, set_tunables(gen.source, task.entry_point, {"BLOCK_C": 16}), tmp_path)


@pytest.mark.parametrize("task_id", ["softmax_fp32", "cumprod_fp16"])
def test_reductions_and_scans_keep_the_row_in_one_program(task_id):
    task = get_task(task_id)
    source = generate(task).source
    assert "BLOCK_C" not in tunable_values(source, task.entry_point)
    assert "tl.program_id(1)" not in source
