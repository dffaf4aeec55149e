"""Loading task files: valid ones load, malformed ones name the file and the field."""

from pathlib import Path

import pytest

from benchmarks.loading import get_task, load_all, load_task_file
from benchmarks.task import TaskError

SOFTMAX = (
    Path(__file__).resolve().parent.parent / "benchmarks" / "tasks" / "normalization" / "softmax.py"
)


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    src = SOFTMAX.read_text()
    assert old in src, old
    path = tmp_path / "variant.py"
    path.write_text(src.replace(old, new, 1))
    return path


def test_softmax_loads_one_task_per_dtype():
    tasks = load_task_file(SOFTMAX)
    assert [t.id for t in tasks] == ["softmax_fp32", "softmax_fp16", "softmax_bf16"]
    t = tasks[1]
    assert t.category == "normalization" and t.entry_point == "softmax"
    assert t.modes[:2] == ("standard", "outlier")
    assert all(s.source for s in t.shapes)
    assert t.tolerance.atol == 1e-3


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ('NAME = "softmax"', 'NAME = "Soft Max"', "NAME"),
        ('CATEGORY = "normalization"', 'CATEGORY = "magic"', "CATEGORY"),
        ('ENTRY_POINT = "softmax"', 'ENTRY_POINT = "nope"', "ENTRY_POINT"),
        ('DTYPES = ("fp32", "fp16", "bf16")', 'DTYPES = ("fp32", "fp13")', "DTYPES"),
        ('"weight": 0.2,', '"weight": -1,', "SHAPES[0].weight"),
        ('"phase": "decode",', '"phase": "later",', "SHAPES[0].phase"),
        (
            '{"name": "tiny", "dims": {"M": 4, "N": 128}}',
            '{"name": "tiny", "dims": {"M": 4.5, "N": 128}}',
            "CPU_SHAPES[0].dims.M",
        ),
        ('"bf16": {"atol": 4e-3, "rtol": 2e-2},', "", "TOLERANCE.bf16"),
        (
            '"bf16": {"atol": 4e-3, "rtol": 2e-2},',
            '"bf16": {"atol": 4e-3, "rtol": 2e-2, "terms": 1e-3},',
            "TOLERANCE.bf16.terms",
        ),
        (
            '"bf16": {"atol": 4e-3, "rtol": 2e-2},',
            '"bf16": {"atol": 4e-3, "rtol": 2e-2, "terms": -1},',
            "TOLERANCE.bf16.terms",
        ),
        ("def flops(dims, dtype):", "def flops(dims):", "flops"),
    ],
)
def test_malformed_task_names_file_and_field(tmp_path, old, new, field):
    path = _variant(tmp_path, old, new)
    with pytest.raises(TaskError) as info:
        load_task_file(path)
    assert info.value.field == field
    assert str(path) in str(info.value)


def test_missing_field_and_syntax_error(tmp_path):
    path = _variant(tmp_path, 'DESCRIPTION = """', 'DESCRIPTIO = """')
    with pytest.raises(TaskError, match="DESCRIPTION: missing"):
        load_task_file(path)
    bad = tmp_path / "broken.py"
    bad.write_text("NAME = 'x'\ndef oops(:\n")
    with pytest.raises(TaskError, match="syntax error at line 2"):
        load_task_file(bad)


def test_quant_contract_needs_all_three(tmp_path):
    path = _variant(
        tmp_path,
        'TOLERANCE = {\n    "fp32": {"atol": 1e-5, "rtol": 1e-4},',
        'TOLERANCE = {"cosine": 0.99, "rmse": 0.1, "why": "x",\n    "fp32": {"atol": 1e-5, "rtol": 1e-4},',
    )
    with pytest.raises(TaskError, match="missing \\['rel_l1'\\]"):
        load_task_file(path)


def test_get_task_by_id_and_helpful_miss():
    assert get_task("softmax_fp16").dtype == "fp16"
    with pytest.raises(KeyError, match="softmax_fp32"):
        get_task("softmax")


def test_whole_suite_loads():
    tasks = load_all()
    assert "softmax_fp32" in tasks
