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


# DECODE_ROWS 0 and MIN_PROGRAMS 1: the CPU shapes' few rows take the path of many rows, packed
MANY = {"DECODE_ROWS": 0, "MIN_PROGRAMS": 1}


@pytest.mark.parametrize(
    "task_id,config",
    [
        ("linalg_batched_outer_fp16", {"TILE": 4096, "MIN_PROGRAMS": 1}),  # independent columns
        ("cumprod_fp16", {"TILE": 4096, **MANY}),  # a scan along each of several rows
        ("softmax_fp32", {"TILE": 4096, **MANY}),  # reductions, then per-row values
        ("row_argmax_fp16", {"TILE": 4096, **MANY}),  # arg-reductions' (value, index) pairs
        ("cumprod_fp16", {"TILE": 256, "MAX_BLOCK_N": 16, **MANY}),  # looped: a carry per row
        ("row_argmax_fp16", {"TILE": 256, "MAX_BLOCK_N": 16, **MANY}),  # looped: best pairs
    ],
)
def test_short_rows_share_a_program(task_id, config, tmp_path):
    """Several rows per program (BLOCK_R = TILE // BLOCK_N): the CPU shapes' row counts are
    drawn ragged, so the last program's rows past R are masked, per-row loads and stores too."""
    task = get_task(task_id)
    source = generate(task).source
    assert "TILE" in tunable_values(source, task.entry_point)
    assert "tl.arange(0, BLOCK_R)[:, None]" in source
    _judge(task, set_tunables(source, task.entry_point, config), tmp_path)


def test_a_column_reduction_reads_adjacent_columns_together(tmp_path):
    """A reduction over the first dim (a bias gradient's column sum) reads its rows strided;
    by default a program takes TILE // MAX_BLOCK_N adjacent columns and walks the reduced dim
    MAX_BLOCK_N at a time, so each load is contiguous along the columns."""
    task = get_task("bias_grad_colsum_fp16")
    source = generate(task).source
    values = tunable_values(source, task.entry_point)
    assert values["TILE"] // values["MAX_BLOCK_N"] >= 16
    assert "base = (row // inner) * (N * inner) + row % inner" in source
    small = {"TILE": 256, "MAX_BLOCK_N": 16, **MANY}  # 16 columns a program, looped
    _judge(task, set_tunables(source, task.entry_point, small), tmp_path)


@pytest.mark.parametrize("task_id", ["softmax_fp32", "cumprod_fp16"])
def test_few_rows_take_the_decode_configuration(task_id, tmp_path):
    """A call with at most DECODE_ROWS rows runs one row per program with DECODE_ROW_WARPS and
    DECODE_ROW_BLOCK_N in place of num_warps and MAX_BLOCK_N: here every call is one (DECODE_ROWS
    huge), its tile narrower than the rows (the looped kernel), and MAX_BLOCK_N set to 0, which
    no kernel could run with, so a pass shows the decode values were the ones used."""
    task = get_task(task_id)
    source = generate(task).source
    assert tunable_values(source, task.entry_point)["DECODE_ROWS"] >= 64
    assert "if R <= DECODE_ROWS:" in source
    config = {
        "DECODE_ROWS": 1 << 30,
        "DECODE_ROW_BLOCK_N": 16,
        "DECODE_ROW_WARPS": 2,
        "MAX_BLOCK_N": 0,
    }
    _judge(task, set_tunables(source, task.entry_point, config), tmp_path)


def test_packed_rows_keep_enough_programs():
    """Rows read contiguously are packed no further than keeps about MIN_PROGRAMS / 2 programs
    (a one-element gather per row of 8192 rows: 4 programs of 2048 rows before); rows read
    strided are packed by TILE alone, their adjacent columns being what makes loads contiguous."""
    gather = get_task("gather_lastdim_fp16")
    assert "min(TILE // BLOCK_N, R // MIN_PROGRAMS)" in generate(gather).source
    colsum = get_task("bias_grad_colsum_fp16")
    assert "min(TILE // BLOCK_N, R)" in generate(colsum).source
