"""The scripts that produce docs/results: correctness-only sweeps with several judges, the
solution-times table (GPU only; re-rendering works anywhere)."""

import json

from benchmarks import solution_times, solutions_table


def test_parallel_sweep_needs_no_perf(capsys):
    try:
        solutions_table.main(["--device", "cpu", "--tasks", "silu_fp16", "--jobs", "2"])
    except SystemExit as exc:
        assert exc.code == 2
    assert "--no-perf" in capsys.readouterr().err


def test_parallel_sweep_judges_every_task(tmp_path):
    out = tmp_path / "sweep.md"
    code = solutions_table.main(["--device", "cpu", "--tasks", "silu_fp16,relu_squared_fp32", "--no-perf", "--jobs", "2", "--trials", "1", "--out", str(out)])
    verdicts = json.loads(out.with_suffix(".json").read_text())
    assert code == 0 and {v["task_id"] for v in verdicts} == {"silu_fp16", "relu_squared_fp32"}
    assert all(v["passed"] for v in verdicts)
    assert "2 judge(s) at once" in out.read_text() and "2 of 2 solutions passed" in out.read_text()
    # --failed-from keeps only what did not pass: nothing here
    again = tmp_path / "again.md"
    solutions_table.main(["--device", "cpu", "--tasks", "silu_fp16", "--no-perf", "--failed-from", str(out.with_suffix(".json")), "--out", str(again)])
    assert json.loads(again.with_suffix(".json").read_text()) == []


def test_solution_times_says_not_measured_without_gpu(tmp_path, capsys):
    assert solution_times.main(["--device", "cpu", "--out", str(tmp_path / "t.md")]) == 2
    assert "not measured" in capsys.readouterr().err
    assert not (tmp_path / "t.md").exists()


def test_solution_times_rerender_adds_verdicts(tmp_path):
    rows = [{"task": "silu_fp16", "shape": "s", "phase": "decode", "weight": 1.0, "dims": {}, "solution_us": 2.0, "eager_us": 4.0, "roofline_us": 1.0, "attainment": 0.5, "iou": 0.5, "mfu": 0.01}]
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(json.dumps(rows[0]) + "\n")
    header = tmp_path / "t.md"
    header.write_text("# Times\n\n- date: 2026-11-29\n\n| task | old table |\n")
    verdicts = tmp_path / "v.json"
    verdicts.write_text(json.dumps([{"task_id": "silu_fp16", "passed": False, "error_class": "numerical_mismatch"}]))
    out = tmp_path / "out.md"
    assert solution_times.main(["--from-jsonl", str(jsonl), "--header-from", str(header), "--verdicts", str(verdicts), "--out", str(out)]) == 0
    text = out.read_text()
    assert "- date: 2026-11-29" in text and "judge column added afterwards" in text
    assert "| silu_fp16 | FAIL numerical_mismatch | s | decode | 2.0 | 4.0 | not measured | 2.00 |" in text


def test_precompile_warms_every_task_and_reports_failures():
    # on the CPU shapes (Inductor's CPU backend); the GPU path is the same code on "cuda" shapes
    results = solution_times.precompile_all(["relu_squared_fp32", "silu_fp32"], "cpu", 2)
    assert [r[0] for r in results] == ["relu_squared_fp32", "silu_fp32"]
    assert all(err == "" for _, _, err in results), results


def test_harness_speed_reports_median_max_and_floor(tmp_path):
    from benchmarks import harness_speed

    out = tmp_path / "speed.md"
    assert harness_speed.main(["--device", "cpu", "--repeats", "1", "--out", str(out)]) == 0
    text = out.read_text()
    assert "| cold (Triton cache and baselines) |" in text and "| warm 1 |" in text
    assert "child_first_call" in text and "of 1 warm runs under the floor" in text
