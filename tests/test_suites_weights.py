"""Suites select what they say; serving weights are derived and normalised."""

import math

import pytest

from benchmarks.loading import load_all
from benchmarks.suites import suite_tasks
from benchmarks.weights import BANDWIDTH, PEAK_FLOPS, family_weights, layer_ops, task_weights
from profiling.roofline import suite_score


def test_family_weights_sum_to_one_and_gemm_cost_is_hand_computed():
    assert math.isclose(sum(family_weights().values()), 1.0, rel_tol=1e-12)
    qkv = layer_ops("prefill")[1]
    flops = 2.0 * 8192 * 4096 * (4096 + 2 * 1024)
    assert qkv.family == "gemm" and qkv.flops == flops
    assert math.isclose(qkv.seconds, max(flops / PEAK_FLOPS, qkv.bytes / BANDWIDTH))


def test_task_weights_normalised_over_the_serving_suite():
    tasks = load_all()
    w = task_weights(list(tasks.values()))
    assert w and math.isclose(sum(w.values()), 1.0, rel_tol=1e-9)
    assert {t.id for t in suite_tasks("serving", tasks)} == set(w)
    assert all(tasks[i].dtype in ("bf16", "fp16") for i in w)


def test_s_agg_uses_the_weights():
    w = {"a": 3.0, "b": 1.0}
    assert math.isclose(suite_score({"a": 0.5, "b": 0.9}, w), 0.75 * 0.5 + 0.25 * 0.9)


def test_lite_is_stratified_and_quant_is_the_category():
    tasks = load_all()
    lite = suite_tasks("lite", tasks)
    assert len(lite) == min(30, len({t.name for t in tasks.values()}))
    assert len({t.name for t in lite}) == len(lite)  # one variant per task file
    cats = {t.category for t in tasks.values()}
    assert {t.category for t in lite} == cats or len(lite) == 30
    assert all(t.category == "quantization" for t in suite_tasks("quant", tasks))
    with pytest.raises(KeyError, match="unknown suite"):
        suite_tasks("nope", tasks)
