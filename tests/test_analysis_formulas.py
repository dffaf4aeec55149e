"""The analyses pinned to hand-computed values on rows built by hand."""

import math

import pytest
from result_rows import H200, cpu_row, row

from benchmarks.results.analysis import (
    NOT_MEASURED,
    analyze,
    category_method_table,
    fast_p_curves,
    feature_adoption,
    final_rows,
    geomean_speedups,
    iteration_curves,
    per_task,
    portability,
    repair_bias,
    s_agg,
    serving_weights,
    stage_pass_rates,
    variance_share,
)
from benchmarks.results.rows import no_kernel_row
from benchmarks.results.throughput import throughput
from benchmarks.verdict import Stage


def four_tasks():
    """Method m1 on four tasks: three correct (0.5x, 1.5x, 2.5x over eager), one incorrect."""
    return [
        row("t1", speedup=0.5, compile_speedup=0.25),
        row("t2", speedup=1.5, compile_speedup=1.0),
        row("t3", speedup=2.5, compile_speedup=2.0),
        row("t4", passed=False, stage="compile"),
    ]


def test_final_rows_keep_the_best_attempt_of_each_run():
    rows = [
        row("t1", passed=False, attempt=0),
        row("t1", speedup=1.2, attempt=1),
        row("t1", speedup=1.8, attempt=2),
        row("t1", passed=False, attempt=3),
        row("t1", seed=1, passed=False, stage="call", attempt=0),
        row("t1", seed=1, passed=False, stage="correct_standard", attempt=1),
    ]
    finals = final_rows(rows)
    assert [(r.seed, r.attempt) for r in finals] == [(0, 2), (1, 1)]


def test_stage_pass_rates_count_run_outcomes():
    rows = [
        row("t1"),
        row("t2", passed=False, stage="correct_standard", error_class="nondeterministic"),
        row("t3", passed=False, stage="compile"),
        row("t4", passed=False, stage="static"),
    ]
    rates = stage_pass_rates(rows)["m1"]
    assert (rates[Stage.COMPILE].hits, rates[Stage.COMPILE].total) == (3, 4)
    assert rates[Stage.CALL].hits == 2
    assert rates[Stage.CORRECT_STANDARD].hits == 2
    assert rates[Stage.CORRECT_OUTLIER].hits == 1
    assert rates[Stage.NO_FALLBACK].rate == 0.25


def test_fast_p_and_geomean_match_hand_values():
    curves = fast_p_curves(four_tasks(), "eager")["m1"]
    at = dict(zip(curves.ps, curves.values, strict=True))
    assert (at[0.0], at[1.0], at[2.0], at[3.0]) == (0.75, 0.5, 0.25, 0.0)
    assert at[0.5] == 0.5  # 0.5 is not > 0.5
    g = geomean_speedups(four_tasks())["m1"]
    assert g.eager == pytest.approx((0.5 * 1.5 * 2.5) ** (1 / 3))  # 1.2331
    assert g.compile == pytest.approx((0.25 * 1.0 * 2.0) ** (1 / 3))  # 0.7937
    assert (g.correct, g.total) == (3, 4)


def test_speed_on_the_cpu_interpreter_is_not_measured_never_a_number():
    rows = [cpu_row("t1"), cpu_row("t2", passed=False), cpu_row("t3", parent=0, attempt=1)]
    a = analyze(rows, weights={"t1": 1.0})
    assert a.fast_p_eager["m1"].values is None and a.fast_p_eager["m1"].reason.startswith(
        NOT_MEASURED
    )
    assert str(a.speedups["m1"].eager).startswith(NOT_MEASURED) and str(
        a.speedups["m1"].compile
    ).startswith(NOT_MEASURED)
    assert str(a.s_agg["m1"].value).startswith(NOT_MEASURED)
    assert str(a.table[("c1", "m1")].geomean_eager).startswith(NOT_MEASURED)
    assert all(str(p.best_speedup).startswith(NOT_MEASURED) for p in a.iterations["m1"])
    assert str(a.repair["m1"].first_try_speedup).startswith(NOT_MEASURED)
    assert a.portability.reason.startswith(NOT_MEASURED)
    assert all(str(v).startswith(NOT_MEASURED) for v in a.features["m1"].shares.values())


def test_a_correct_gpu_kernel_without_timing_makes_speed_not_measured():
    rows = [row("t1", speedup=2.0), row("t2", speedup=None)]
    assert str(geomean_speedups(rows)["m1"].eager).startswith(NOT_MEASURED)
    assert fast_p_curves(rows)["m1"].values is None


def test_s_agg_weights_scores_and_counts_failures_as_zero():
    rows = [
        row("a", score=0.5, speedup=1.0),
        row("a", seed=1, score=0.7, speedup=1.0),
        row("b", passed=False),
        row("elsewhere", score=0.9, speedup=3.0),
    ]
    result = s_agg(rows, weights={"a": 3.0, "b": 1.0, "c": 2.0})["m1"]
    # best score over seeds for a (0.7), 0 for the failed b; c has no row: not covered
    assert result.value == pytest.approx((3.0 * 0.7 + 1.0 * 0.0) / 4.0)
    assert result.covered == ["a", "b"] and result.missing == ["c"]


def test_s_agg_uses_the_serving_suite_weights():
    weights = serving_weights()
    assert "matmul_bf16" in weights and sum(weights.values()) == pytest.approx(1.0)
    rows = [row("matmul_bf16", score=0.8, speedup=1.1), row("softmax_bf16", score=0.4, speedup=1.3)]
    value = s_agg(rows)["m1"].value
    w_m, w_s = weights["matmul_bf16"], weights["softmax_bf16"]
    assert value == pytest.approx((w_m * 0.8 + w_s * 0.4) / (w_m + w_s))


def balanced_design():
    """2 categories x 2 methods x 2 tasks per category; correct: (c1, m1) both, (c1, m2) one, c2 none."""
    outcome = {
        ("t1", "m1"): 1,
        ("t2", "m1"): 1,
        ("t1", "m2"): 1,
        ("t2", "m2"): 0,
        ("t3", "m1"): 0,
        ("t4", "m1"): 0,
        ("t3", "m2"): 0,
        ("t4", "m2"): 0,
    }
    cats = {"t1": "c1", "t2": "c1", "t3": "c2", "t4": "c2"}
    return [
        row(t, m, passed=bool(ok), category=cats[t], speedup=1.0 if ok else None)
        for (t, m), ok in outcome.items()
    ]


def test_variance_share_is_eta_squared_of_each_factor():
    # y = 1,1,1,0,0,0,0,0; mean 3/8; SS_total = 120/64
    # category means 3/4, 0 -> SS = 72/64;  method means 1/2, 1/4 -> SS = 8/64;  cells 1, 1/2, 0, 0 -> SS = 88/64
    v = variance_share(balanced_design())
    assert v.balanced and v.n == 8
    assert v.category == pytest.approx(72 / 120)
    assert v.method == pytest.approx(8 / 120)
    assert v.cells == pytest.approx(88 / 120)
    assert v.interaction == pytest.approx((88 - 72 - 8) / 120)
    assert v.residual == pytest.approx(32 / 120)


def test_variance_share_is_undefined_when_every_outcome_is_the_same():
    v = variance_share([row("t1"), row("t2", "m2")])
    assert v.category is None and "undefined" in v.note


def test_category_method_table():
    table = category_method_table(balanced_design())
    assert (table[("c1", "m2")].solved, table[("c1", "m2")].total) == (1, 2)
    assert table[("c1", "m1")].geomean_eager == pytest.approx(1.0)
    assert str(table[("c2", "m1")].geomean_eager).startswith(NOT_MEASURED)  # no correct kernel


def test_iteration_curves():
    run_a = [
        row("t1", passed=False, stage="static", iteration=1, attempt=1, run_id="A"),
        row("t1", passed=False, stage="call", iteration=1, attempt=2, run_id="A"),
        row("t1", speedup=1.2, iteration=2, attempt=3, parent=2, run_id="A"),
        row("t1", speedup=1.5, iteration=3, attempt=4, parent=3, run_id="A"),
    ]
    run_b = [row("t2", speedup=2.0, iteration=1, attempt=1, run_id="B")]
    pts = iteration_curves(run_a + run_b)["m1"]
    assert [p.attempts for p in pts] == [3, 1, 1]
    assert pts[0].compile_rate == pytest.approx(2 / 3)  # the static failure never compiled
    assert pts[0].correct_rate == pytest.approx(1 / 3)
    assert [p.solved_share for p in pts] == [0.5, 1.0, 1.0]
    # over both runs; run A sits at the eager floor (1.0) until its first correct kernel
    assert pts[0].best_speedup == pytest.approx(math.sqrt(1.0 * 2.0))
    assert pts[1].best_speedup == pytest.approx(math.sqrt(1.2 * 2.0))
    assert pts[2].best_speedup == pytest.approx(math.sqrt(1.5 * 2.0))


def test_best_speedup_so_far_never_falls_when_a_slow_run_is_solved_late():
    """Averaged over the runs solved so far, this curve went 3.0 -> 1.73 -> 1.39: run B solved late
    and slowly pulled the mean down. Over a fixed set of runs with an eager floor it only rises."""
    rows = [
        row("t1", speedup=3.0, iteration=1, attempt=1, run_id="A"),
        row("t2", passed=False, iteration=1, attempt=1, run_id="B"),
        row("t2", speedup=1.2, iteration=2, attempt=2, parent=1, run_id="B"),
        row("t3", passed=False, iteration=1, attempt=1, run_id="C"),
        row("t3", speedup=0.5, iteration=3, attempt=2, parent=1, run_id="C"),  # slower than eager
        no_kernel_row("t4", category="c1", method="m1", reason="stopped", run_id="D", device=H200),
    ]
    pts = iteration_curves(rows)["m1"]
    curve = [p.best_speedup for p in pts]
    assert curve == sorted(curve)
    assert curve[0] == pytest.approx(3.0 ** (1 / 4))  # A 3.0; B, C, D at the floor
    assert curve[1] == pytest.approx((3.0 * 1.2) ** (1 / 4))
    assert curve[2] == pytest.approx(curve[1])  # C's 0.5x kernel does not beat eager
    assert [p.solved_share for p in pts] == [0.25, 0.5, 0.75]
    assert [p.attempts for p in pts] == [3, 1, 1]  # the run that judged nothing is no attempt


def test_every_run_is_an_outcome_including_runs_that_judged_nothing():
    """5 runs, 2 correct, one with no kernel at all: 2/5, not 2/4 (the issue's report)."""
    rows = [
        row("t1", speedup=1.5, run_id="r1"),
        row("t2", speedup=2.0, run_id="r2"),
        row("t3", passed=False, run_id="r3"),
        row("t4", passed=False, stage="compile", run_id="r4"),
        # judged nothing, and its row carries no GPU name: still a failure, not a CPU measurement
        no_kernel_row("t5", category="c1", method="m1", reason="no kernel judged", run_id="r5"),
    ]
    a = analyze(rows, weights={"t1": 1.0})
    rates = a.stage_rates["m1"]
    assert rates[Stage.NO_FALLBACK].total == 5 and rates[Stage.NO_FALLBACK].hits == 2
    assert rates[Stage.COMPILE].hits == 4  # all but the run that judged nothing
    assert (a.speedups["m1"].correct, a.speedups["m1"].total) == (2, 5)
    assert a.speedups["m1"].eager == pytest.approx(math.sqrt(1.5 * 2.0))
    at = dict(zip(a.fast_p_eager["m1"].ps, a.fast_p_eager["m1"].values, strict=True))
    assert at[1.0] == pytest.approx(2 / 5)
    assert a.table[("c1", "m1")].total == 5


def test_two_runs_of_one_task_and_seed_are_two_outcomes():
    rows = [row("t1", speedup=2.0, run_id="first"), row("t1", passed=False, run_id="again")]
    assert len(final_rows(rows)) == 2
    assert stage_pass_rates(rows)["m1"][Stage.NO_FALLBACK].total == 2


def test_per_task_entries_take_the_best_outcome_and_mark_the_best_s():
    rows = [
        row("t1", "a", speedup=1.2, compile_speedup=0.9, score=0.4, seed=0),
        row("t1", "a", speedup=1.8, compile_speedup=1.1, score=0.6, seed=1),
        row("t1", "b", speedup=2.5, compile_speedup=2.0, score=0.5),
        row("t1", "c", passed=False),
    ]
    entries = {e.method: e for e in per_task(rows)}
    assert (entries["a"].correct, entries["a"].total) == (2, 2)
    assert entries["a"].speedup_eager == pytest.approx(1.8) and entries["a"].score == 0.6
    assert entries["a"].best and not entries["b"].best
    assert entries["b"].speedup_compile == pytest.approx(2.0)
    assert entries["c"].score == 0.0 and str(entries["c"].speedup_eager).startswith(NOT_MEASURED)


def test_repair_bias_compares_rescued_kernels_with_first_try_kernels():
    repaired = [
        row("t1", passed=False, attempt=1, run_id="A"),
        row("t1", speedup=1.0, attempt=2, parent=1, run_id="A"),
        row("t1", speedup=1.44, attempt=3, parent=2, run_id="A"),
    ]  # its grandparent failed: rescued too
    first = [
        row("t2", speedup=2.0, attempt=1, run_id="B"),
        row("t2", speedup=3.0, attempt=2, parent=1, run_id="B"),
    ]
    bias = repair_bias(repaired + first)["m1"]
    assert (bias.rescued, bias.first_try, bias.descended) == (2, 1, 1)
    assert bias.rescued_speedup == pytest.approx(1.2)
    assert bias.first_try_speedup == pytest.approx(2.0)
    assert bias.ratio == pytest.approx(0.6)


def test_portability_is_max_over_min_across_gpus():
    rows = [
        row("t1", speedup=2.0, device=H200),
        row("t1", speedup=1.0, device="NVIDIA A100"),
        row("t2", speedup=1.5, device=H200),
        row("t2", speedup=1.2, device="NVIDIA A100"),
        row("t3", speedup=1.5, device=H200),
    ]  # only one GPU: not in the table
    p = portability(rows)
    assert p.devices == ["NVIDIA A100", H200]
    assert [(e.task_id, e.ratio) for e in p.entries] == [("t1", 2.0), ("t2", pytest.approx(1.25))]
    assert p.by_method["m1"] == pytest.approx(math.sqrt(2.0 * 1.25))
    assert portability([row("t1", speedup=2.0)]).reason.startswith(NOT_MEASURED)


def test_feature_adoption_from_ptx():
    rows = [
        row("t1", ptx_features={"wgmma": True, "tma": True}),
        row("t2", ptx_features={"wgmma": False}),
        row("t3"),
        row("t4", passed=False, ptx_features={"wgmma": True}),
    ]
    f = feature_adoption(rows)["m1"]
    assert (f.kernels, f.without_ptx) == (2, 1)
    assert f.shares["wgmma"] == 0.5 and f.shares["tma"] == 0.5 and f.shares["mma"] == 0.0


def test_scripted_rows_form_their_own_method_group():
    rows = [row("t1", "aka", speedup=2.0), row("t1", "aka", speedup=8.0, scripted=True)]
    g = geomean_speedups(rows)
    assert set(g) == {"aka", "aka [scripted]"}
    assert g["aka"].eager == 2.0


def test_throughput_lays_a_methods_runs_end_to_end_on_their_own_clocks():
    """m1's runs A (started 10:00, verdicts 10:01 and 10:03) and B (10:10; 10:12) with m2's run in
    between: m1 ran 3 + 2 = 5 minutes for 3 candidates; m2's time is not m1's."""

    def at(minute: int) -> str:
        return f"2026-12-01T10:{minute:02d}:00+00:00"

    start_a, start_b = {"run_started": at(0)}, {"run_started": at(10)}
    rows = [
        row("t1", passed=False, attempt=1, run_id="A", timestamp=at(1), **start_a),
        row("t1", attempt=2, run_id="A", timestamp=at(3), **start_a),
        row("t2", "m2", passed=False, run_id="X", timestamp=at(8), run_started=at(4)),
        row("t2", attempt=1, run_id="B", timestamp=at(12), **start_b),
        # imported: its time is when kernforge judged it, not when its author wrote it
        row("t3", attempt=0, timestamp=at(59), source="import:geak"),
    ]
    t = throughput(rows)
    assert set(t) == {"m1", "m2"}
    m1 = t["m1"]
    assert (m1.runs, m1.judged) == (2, 3)
    assert m1.minutes == pytest.approx(5.0) and m1.per_minute == pytest.approx(3 / 5)
    assert m1.first_correct_minutes == pytest.approx((3 + 2) / 2)  # median of A's 3, B's 2
    assert m1.minutes_at == pytest.approx([0, 1, 3, 5, 5]) and m1.judged_at == [0, 1, 2, 3, 3]
    assert t["m2"].per_minute == pytest.approx(1 / 4)
    assert str(t["m2"].first_correct_minutes).startswith(NOT_MEASURED)
    same_second = throughput([row("t1", timestamp=at(5)), row("t2", timestamp=at(5))])
    assert str(same_second["m1"].per_minute).startswith(NOT_MEASURED)
