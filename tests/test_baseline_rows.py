"""Eager and torch.compile as methods of their own, derived from the verdicts' reference times."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from result_rows import row

from benchmarks.results.analysis import analyze
from benchmarks.results.baselines import baseline_rows
from benchmarks.results.report import write_report


def shape(name: str, cand: float, eager: float, comp: float, roof: float) -> dict:
    return {
        "shape": name,
        "dtype": "bf16",
        "weight": 1.0,
        "phase": "prefill",
        "candidate_us": cand,
        "eager_us": eager,
        "compile_us": comp,
        "speedup_eager": eager / cand,
        "speedup_compile": comp / cand,
        "attainment": roof / cand,
        "launch_bound": False,
    }


def timed(task: str, method: str, shapes: list[dict], **kw: object) -> object:
    eager = math.prod(s["speedup_eager"] for s in shapes) ** (1 / len(shapes))
    comp = math.prod(s["speedup_compile"] for s in shapes) ** (1 / len(shapes))
    att = sorted(s["attainment"] for s in shapes)
    return row(
        task,
        method,
        speedup=eager,
        compile_speedup=comp,
        score=att[len(att) // 2],
        shapes=shapes,
        stage="perf",
        **kw,
    )


def test_baselines_take_median_times_and_the_candidates_roofline() -> None:
    rows = [
        timed("gemm", "offline", [shape("a", 10.0, 20.0, 16.0, 8.0), shape("b", 5, 4, 4, 2)]),
        # a second verdict of the same task timed the reference a little differently
        timed("gemm", "geak", [shape("a", 12.0, 22.0, 18.0, 8.0), shape("b", 6, 6, 5, 2)]),
        timed("gemm", "kernelagent", [shape("a", 30.0, 21.0, 17.0, 8.0), shape("b", 7, 5, 6, 2)]),
    ]
    base = {b.method: b for b in baseline_rows(rows)}
    assert set(base) == {"eager", "torch.compile"}
    eager, comp = base["eager"], base["torch.compile"]
    a_eager = next(s for s in eager.shapes if s["shape"] == "a")
    a_comp = next(s for s in comp.shapes if s["shape"] == "a")
    assert a_eager["candidate_us"] == 21.0 and a_comp["candidate_us"] == 17.0  # medians
    assert a_eager["speedup_eager"] == 1.0
    assert a_comp["speedup_eager"] == pytest.approx(21.0 / 17.0)
    assert a_eager["attainment"] == pytest.approx(8.0 / 21.0)  # same roofline time (8 µs)
    assert eager.passed and eager.source == "baseline" and eager.geomean_speedup_eager == 1.0
    assert comp.score == pytest.approx((8.0 / 17.0 + 2.0 / 5.0) / 2)


def test_cpu_rows_and_untimed_rows_make_no_baseline() -> None:
    from result_rows import cpu_row

    assert baseline_rows([cpu_row("t"), row("t", speedup=None)]) == []


def test_the_speed_table_and_s_agg_show_the_baselines_beside_the_methods(tmp_path: Path) -> None:
    rows = [
        timed("gemm", "offline", [shape("a", 10.0, 20.0, 16.0, 8.0)]),
        timed("norm", "offline", [shape("n", 4.0, 6.0, 3.0, 2.0)]),
    ]
    weights = {"gemm": 3.0, "norm": 1.0}
    a = analyze(rows, weights)
    assert a.speed_methods == ["offline", "eager", "torch.compile"]
    assert a.methods == ["offline"]  # pass-rate tables keep the real methods only
    # S_agg from the same roofline: the kernel (0.8, 0.5) against torch.compile (0.5, 0.667)
    assert a.s_agg["offline"].value == pytest.approx((3 * 0.8 + 0.5) / 4)
    assert a.s_agg["torch.compile"].value == pytest.approx((3 * 0.5 + 2 / 3) / 4)
    assert a.speedups["torch.compile"].eager == pytest.approx(math.sqrt(20 / 16 * 6 / 3))
    md = write_report(rows, tmp_path / "r", weights=weights).markdown.read_text()
    speed = md.split("## Speed")[1].split("## ")[0]
    assert "| torch.compile |" in speed and "| eager |" in speed
    per_shape = md.split("## Per shape")[1].split("## ")[0]
    # roofline, eager, torch.compile, the method
    assert "| gemm | NVIDIA H200 | a | bf16 | prefill | 8.00 | 20.00 | 16.00 | 10.00 |" in per_shape
    assert "GB/s and TFLOP/s: not recorded" in per_shape  # these rows carry no counts


def test_per_shape_rates_come_from_the_verdicts_counts(tmp_path: Path) -> None:
    """GB/s = bytes / µs / 1e3 and TFLOP/s = flops / µs / 1e6, for every provider and the roofline;
    a row written before the counts were kept beside the times takes them from its verdict."""
    counted = {"flops": 2e9, "bytes": 4e6, "roofline_us": 8.0}
    new = timed("gemm", "offline", [{**shape("a", 10.0, 20.0, 16.0, 8.0), **counted}])
    old = timed("gemm", "geak", [shape("a", 12.5, 20.0, 16.0, 8.0)])  # no counts in the row
    old.verdict = {"shapes": [{"shape": "a", "dtype": "bf16", **counted}]}
    a = analyze([new, old], {"gemm": 1.0})
    (line,) = a.shapes
    assert line.times_us == {"eager": 20.0, "torch.compile": 16.0, "offline": 10.0, "geak": 12.5}
    assert line.gbps(20.0) == pytest.approx(200.0) and line.tflops(10.0) == pytest.approx(200.0)
    md = write_report([new, old], tmp_path / "r", weights={"gemm": 1.0}).markdown.read_text()
    per_shape = md.split("## Per shape")[1].split("## ")[0]
    gbps = per_shape.split("**GB/s**")[1].split("**TFLOP/s**")[0]
    tflops = per_shape.split("**TFLOP/s**")[1]
    # roofline 8 µs, eager 20, torch.compile 16, geak 12.5, offline 10 (methods alphabetical)
    assert "| roofline GB/s | eager GB/s | torch.compile GB/s | geak GB/s | offline GB/s |" in gbps
    assert "| prefill | 500 | 200 | 250 | 320 | 400 |" in gbps
    assert "| prefill | 250 | 100 | 125 | 160 | 200 |" in tflops
    old.verdict = None  # neither the row nor a verdict: not recorded, never a number
    (line,) = analyze([old], {"gemm": 1.0}).shapes
    assert line.bytes is None and line.gbps(12.5) is None


def test_baselines_of_a_decode_shape_are_taken_as_served_when_a_verdict_has_them() -> None:
    def decode(cand: float, eager: float, graph: dict | None) -> dict:
        s = {**shape("d", cand, eager, eager / 2, 1.0), "phase": "decode"}
        s.update({"eager_call_us": eager, "compile_call_us": eager / 2, "timing": "call"})
        if graph:
            s.update({**graph, "timing": "graph"})
        return s

    rows = [
        # one candidate that a graph could not hold: its verdict has per-call times only
        timed("silu", "offline", [decode(40.0, 30.0, None)]),
        # two whose verdicts timed everything inside a CUDA graph as well
        timed("silu", "geak", [decode(5.0, 9.0, {"eager_graph_us": 9.0, "compile_graph_us": 6.0})]),
        timed(
            "silu", "aka", [decode(4.0, 11.0, {"eager_graph_us": 11.0, "compile_graph_us": 7.0})]
        ),
    ]
    base = {b.method: b.shapes[0] for b in baseline_rows(rows)}
    assert base["eager"]["timing"] == "graph" and base["eager"]["candidate_us"] == 10.0
    assert base["torch.compile"]["candidate_us"] == 6.5  # graph medians, never the call times
    assert base["eager"]["speedup_compile"] == pytest.approx(6.5 / 10.0)
    # rows with per-call times only (written before graphs were kept) stay call by call
    old = [timed("silu", "offline", [shape("d", 40.0, 30.0, 15.0, 1.0)])]
    assert {b.shapes[0]["timing"] for b in baseline_rows(old)} == {"call"}
