"""Writing GPU verification into KB_META changes only verified_on and attainment."""

import ast

import pytest

from knowledge_base.record_verification import replace_meta, task_scores, template_plan

SOURCE = '''"""doc"""

KB_META = {
    "op_family": "x",
    "verified_on": [],
    "attainment": None,
    "tunables": {"BLOCK": [1, 2]},
}


def f():
    return 1
'''


def test_replace_meta_changes_only_the_two_values():
    out = replace_meta(
        SOURCE,
        ["NVIDIA H200"],
        {"silu_fp16": 0.5, "not_verified": {"silu_fp32": "harness_error"}, "source": "s"},
    )
    meta = ast.literal_eval(out.split("KB_META = ", 1)[1].split("\n\n", 1)[0])
    assert meta["verified_on"] == ["NVIDIA H200"]
    assert meta["attainment"] == {
        "silu_fp16": 0.5,
        "not_verified": {"silu_fp32": "harness_error"},
        "source": "s",
    }
    assert meta["tunables"] == {"BLOCK": [1, 2]} and out.endswith("def f():\n    return 1\n")
    assert replace_meta(out, ["NVIDIA H200"], meta["attainment"]) == out  # idempotent


def test_missing_meta_is_an_error():
    with pytest.raises(ValueError):
        replace_meta("x = 1\n", [], {})


def test_task_score_is_median_over_shapes():
    rows = [
        {"task": "a", "attainment": 0.2},
        {"task": "a", "attainment": 0.6},
        {"task": "a", "attainment": 0.4},
        {"task": "b"},
    ]
    assert task_scores(rows) == {"a": 0.4}


def test_template_is_verified_only_when_every_checked_shape_is_correct():
    report = {
        "device": "NVIDIA H200",
        "results": [
            {"template": "tpl_a", "shape": "big", "ok": True, "attainment": 0.71234},
            {"template": "tpl_a", "shape": "small", "ok": True, "attainment": 0.5},
            {"template": "tpl_b", "shape": "big", "ok": True, "attainment": 0.9},
            {"template": "tpl_b", "shape": "tail", "ok": False, "detail": "max_abs_err=3"},
        ],
    }
    plans = template_plan(report, "t.json")
    assert plans["tpl_a"] == (["NVIDIA H200"], {"big": 0.7123, "small": 0.5, "source": "t.json"})
    devices, attainment = plans["tpl_b"]
    assert devices == [] and attainment["not_verified"] == {"tail": "max_abs_err=3"}
    assert attainment["big"] == 0.9
