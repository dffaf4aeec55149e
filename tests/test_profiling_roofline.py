"""Roofline arithmetic and scores, each pinned to a value computed by hand."""

from __future__ import annotations

import pytest

from profiling.roofline import (
    attainment,
    bound,
    fast_p,
    geomean,
    iou,
    is_impossible,
    launch_bound,
    mfu,
    roofline_time_s,
    suite_score,
    task_score,
)

H200_BF16 = 989.5e12  # FLOP/s, datasheet dense
H200_BW = 4.8e12  # bytes/s, datasheet


def test_roofline_time_is_the_compute_time_for_a_big_matmul():
    # 4096^3 bf16 GEMM: 2*4096^3 = 137,438,953,472 FLOPs; 3 * 4096^2 * 2 B = 100,663,296 B.
    # compute: 137438953472 / 989.5e12 = 1.38897e-4 s; memory: 100663296 / 4.8e12 = 2.09715e-5 s
    t = roofline_time_s(2 * 4096**3, 3 * 4096**2 * 2, H200_BF16, H200_BW)
    assert t == pytest.approx(137438953472 / 989.5e12)
    assert t == pytest.approx(1.388973e-4, rel=1e-6)


def test_roofline_time_is_the_memory_time_for_softmax():
    # softmax 32768 x 4096 fp16: read + write 2 * 32768 * 4096 * 2 B = 536,870,912 B
    # memory: 536870912 / 4.8e12 = 1.118481e-4 s (111.8 us); ~5 FLOPs/element is negligible.
    t = roofline_time_s(5 * 32768 * 4096, 536_870_912, H200_BF16, H200_BW)
    assert t == pytest.approx(1.118481e-4, rel=1e-6)


def test_attainment_iou_mfu():
    assert attainment(1e-4, 1.25e-4) == pytest.approx(0.8)
    assert attainment(1e-4, 1e-4) == pytest.approx(1.0)
    # 4 GB in 1 ms is 4 TB/s; of 5 TB/s that is 0.8.
    assert iou(4e9, 1e-3, 5e12) == pytest.approx(0.8)
    # 1 TFLOP in 2 ms is 500 TFLOP/s; of 1 PFLOP/s that is 0.5.
    assert mfu(1e12, 2e-3, 1e15) == pytest.approx(0.5)


def test_is_impossible_uses_the_slack():
    assert is_impossible(0.90, 1.0)  # 10 % under the roofline: flagged
    assert not is_impossible(0.96, 1.0)  # within 5 % calibration noise
    assert not is_impossible(0.95, 1.0)  # exactly at the slack: not below it
    assert not is_impossible(1.2, 1.0)
    assert is_impossible(0.99, 1.0, slack=1.0)
    with pytest.raises(ValueError):
        is_impossible(1.0, 1.0, slack=0.0)


def test_bound_compares_intensity_with_the_ridge_point():
    # ridge = 989.5e12 / 4.8e12 = 206.15 FLOP/byte
    assert bound(2 * 4096**3, 3 * 4096**2 * 2, H200_BF16, H200_BW) == "compute"  # AI 1365
    assert bound(4 * 8192 * 4096, 2 * 8192 * 4096 * 2, H200_BF16, H200_BW) == "memory"  # AI 1
    assert bound(200.0, 1.0, 200.0, 1.0) == "compute"  # at the ridge exactly
    assert bound(199.0, 1.0, 200.0, 1.0) == "memory"
    assert bound(1.0, 0.0, 200.0, 1.0) == "compute"  # no bytes at all


def test_task_score_is_the_median_over_shapes():
    assert task_score([0.5, 0.9, 0.7]) == pytest.approx(0.7)
    assert task_score([0.2, 1.0, 0.4, 0.6]) == pytest.approx(0.5)
    assert task_score([0.3]) == pytest.approx(0.3)
    with pytest.raises(ValueError):
        task_score([])


def test_suite_score_normalises_the_weights():
    # (3 * 0.5 + 1 * 1.0) / (3 + 1) = 2.5 / 4 = 0.625
    assert suite_score({"a": 0.5, "b": 1.0}, {"a": 3, "b": 1}) == pytest.approx(0.625)
    # already normalised weights give the plain weighted sum: 0.2*0.9 + 0.8*0.4 = 0.5
    assert suite_score({"x": 0.9, "y": 0.4}, {"x": 0.2, "y": 0.8}) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("scores", "weights", "message"),
    [
        ({"a": 0.5, "b": 1.0}, {"a": 1.0}, "no weight for task"),
        ({"a": 0.5}, {"a": 1.0, "b": 1.0}, "no score for task"),
        ({}, {}, "at least one"),
        ({"a": 0.5}, {"a": 0.0}, "sum to zero"),
        ({"a": 0.5}, {"a": -1.0}, "non-negative"),
    ],
)
def test_suite_score_errors(scores, weights, message):
    with pytest.raises(ValueError, match=message):
        suite_score(scores, weights)


def test_fast_p_counts_correct_and_faster_tasks():
    speedups = [2.0, 0.5, 1.5, 3.0, None]
    correct = [True, True, False, True, False]
    # p = 1: tasks 0 (2.0) and 3 (3.0) -> 2 of 5; task 2 is faster but wrong.
    assert fast_p(speedups, correct, 1.0) == pytest.approx(0.4)
    # p = 0: every correct task with a speedup -> tasks 0, 1, 3 -> 3 of 5
    assert fast_p(speedups, correct, 0.0) == pytest.approx(0.6)
    # strictly greater: a speedup of exactly 2.0 does not pass p = 2
    assert fast_p(speedups, correct, 2.0) == pytest.approx(0.2)
    with pytest.raises(ValueError):
        fast_p([1.0], [True, False], 1.0)
    with pytest.raises(ValueError):
        fast_p([], [], 1.0)


def test_geomean():
    assert geomean([1.0, 4.0, 16.0]) == pytest.approx(4.0)
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert geomean([0.5, 2.0]) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        geomean([1.0, 0.0])
    with pytest.raises(ValueError):
        geomean([])


def test_launch_bound():
    assert launch_bound(5.0, 3.7)  # 5.0 <= 2 * 3.7 = 7.4
    assert launch_bound(7.4, 3.7)
    assert not launch_bound(8.0, 3.7)
    assert launch_bound(10.0, 3.7, factor=3.0)  # 10 <= 11.1


def test_bad_inputs_say_which_argument():
    with pytest.raises(ValueError, match="peak_flops"):
        roofline_time_s(1.0, 1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="t_meas"):
        attainment(1.0, 0.0)
    with pytest.raises(ValueError, match="bandwidth"):
        iou(1.0, 1.0, float("inf"))
