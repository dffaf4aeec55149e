"""The comparison rules the judge applies to outputs."""

import math

import torch

from benchmarks.harness.compare import bitwise_equal, compare_outputs
from benchmarks.task import Tolerance
from benchmarks.verdict import ErrorClass

TOL = Tolerance(atol=1e-3, rtol=1e-3)


def test_close_values_pass_and_report_errors():
    want = torch.tensor([1.0, 2.0, 3.0])
    got = want + 1e-4
    res = compare_outputs(got, want, TOL)
    assert res.ok and math.isclose(res.max_abs_err, 1e-4, rel_tol=1e-3)


def test_first_bad_index_and_counts():
    want = torch.zeros(3, 4)
    got = want.clone()
    got[1, 2] = 0.5
    got[2, 3] = 0.7
    res = compare_outputs(got, want, TOL)
    assert res.error_class == ErrorClass.NUMERICAL_MISMATCH
    assert res.mismatch.first_bad_index == [1, 2]
    assert "2 of 12" in res.message


def test_shape_dtype_and_type_must_match_exactly():
    want = torch.zeros(2, 3)
    assert compare_outputs(torch.zeros(3, 2), want, TOL).error_class == ErrorClass.SHAPE_MISMATCH
    assert (
        compare_outputs(torch.zeros(2, 3, dtype=torch.float64), want, TOL).error_class
        == ErrorClass.DTYPE_MISMATCH
    )
    assert compare_outputs(0.0, want, TOL).error_class == ErrorClass.WRONG_OUTPUT_TYPE
    assert compare_outputs((want, want), want, TOL).error_class == ErrorClass.WRONG_OUTPUT_TYPE


def test_nan_and_inf_must_match_the_reference():
    want = torch.tensor([1.0, float("inf"), float("nan")])
    assert compare_outputs(want.clone(), want, TOL).ok
    got = torch.tensor([1.0, float("-inf"), float("nan")])
    assert compare_outputs(got, want, TOL).error_class == ErrorClass.NAN_INF_MISMATCH
    got = torch.tensor([float("nan"), float("inf"), float("nan")])
    res = compare_outputs(got, want, TOL)
    assert res.error_class == ErrorClass.NAN_INF_MISMATCH and res.mismatch.first_bad_index == [0]


def test_quant_contract_all_three_required():
    tol = Tolerance(cosine=0.999, rel_l1=0.01, rmse=0.01)
    want = torch.linspace(-1, 1, 1000)
    assert compare_outputs(want + 1e-4, want, tol).ok
    res = compare_outputs(want + 0.05, want, tol)  # cosine stays high, but L1 and RMSE do not
    assert not res.ok and "relative L1" in res.message and "RMSE" in res.message
    # hand-computed: constant offset 0.05 -> RMSE exactly 0.05
    assert math.isclose(res.rmse, 0.05, rel_tol=1e-6)


def test_bitwise_equal_treats_nan_as_equal():
    nan = torch.tensor([float("nan"), 1.0])
    assert bitwise_equal(nan, nan.clone())
    assert not bitwise_equal(nan, torch.tensor([float("nan"), 1.0000001]))
