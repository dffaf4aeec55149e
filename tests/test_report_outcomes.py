"""The report counts every run: run directories that judged nothing are failed outcomes, and a
method comparison may mix imported rows with kernforge's own runs in one report."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from result_rows import cpu_row
from typer.testing import CliRunner

from agents.cli.report import report_cmd
from benchmarks.results.rows import NO_KERNEL, ResultStore, collect_rows, rows_from_run_dir

CORRECT = {"passed": True, "stage_reached": "no_fallback"}
WRONG = {"passed": False, "stage_reached": "call", "error_class": "numerical_mismatch"}


def run_dir(
    root: Path,
    run_id: str,
    verdicts: list[dict],
    *,
    method: str = "aka",
    finish: str | None = "offline policy: nothing left to try",
    task: str = "softmax_fp32",
) -> Path:
    """A run directory as the agent writes it: manifest, one attempt folder per verdict, and a
    summary.json when the run stopped (`finish` None: still running or killed)."""
    run = root / run_id
    (run / "attempts").mkdir(parents=True)
    fingerprint = {"device": "cpu", "key": "cpu-key"}
    (run / "manifest.json").write_text(
        json.dumps(
            {
                "run_id": run_id,
                "created": "2026-12-01T10:00:00+00:00",
                "task": {"id": task},
                "llm": "offline",
                "config": {"method": method, "seed": 0, "llm": "offline"},
                "fingerprint": fingerprint,
            }
        )
    )
    for n, verdict in enumerate(verdicts, start=1):
        folder = run / "attempts" / str(n)
        folder.mkdir()
        (folder / "attempt.json").write_text(json.dumps({"id": n, "iteration": n}))
        (folder / "verdict.json").write_text(
            json.dumps({"task_id": task, "device": "cpu", "fingerprint": fingerprint, **verdict})
        )
    if finish is not None:
        (run / "summary.json").write_text(json.dumps({"finished": True, "finish_reason": finish}))
    return run


def report_app() -> typer.Typer:
    app = typer.Typer()
    app.command()(report_cmd)
    return app


def section(md: str, heading: str) -> str:
    return md.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]


def test_a_run_that_judged_nothing_is_one_no_kernel_row_with_its_reason(tmp_path: Path) -> None:
    (row,) = rows_from_run_dir(run_dir(tmp_path, "stopped", [], finish="the model call failed"))
    assert (row.error_class, row.passed, row.attempt, row.stage_reached) == (
        NO_KERNEL,
        False,
        0,
        None,
    )
    assert row.message == "no kernel judged: the model call failed"
    assert row.run_id == "stopped" and row.method == "aka" and row.category == "normalization"
    (running,) = rows_from_run_dir(run_dir(tmp_path, "running", [], finish=None))
    assert "has not finished" in running.message
    # a run with a verdict gives its attempts only
    assert [r.error_class for r in rows_from_run_dir(run_dir(tmp_path, "ok", [CORRECT]))] == [
        "none"
    ]


def test_report_over_five_runs_shows_five_outcomes_and_two_of_five_correct(tmp_path: Path) -> None:
    """The issue's report: 5 runs, one of which judged nothing, were shown as 4 outcomes, 2/4."""
    runs = tmp_path / "runs"
    run_dir(runs, "r1", [WRONG, CORRECT])
    run_dir(runs, "r2", [CORRECT])
    run_dir(runs, "r3", [WRONG])
    run_dir(runs, "r4", [WRONG, WRONG])
    run_dir(runs, "r5", [], finish="stopped before its first verdict")
    result = CliRunner().invoke(report_app(), [str(runs), "--out", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    md = (tmp_path / "report" / "report.md").read_text()
    stages = section(md, "Stage pass rates")
    assert "| aka | 5 | 1 | 80% (4/5) | 80% (4/5) | 40% (2/5) |" in stages
    assert "| aka | 2/5 |" in section(md, "Speed")
    assert "5 run outcomes" in md and "1 of them judged nothing" in md
    assert "r5 (agent run, judged nothing)" in md
    rows = section(md, "Every row")
    assert "| no | nothing | no_kernel |" in rows and "r5/summary.json" in rows


def test_imported_rows_and_kernforges_own_runs_compare_in_one_report(tmp_path: Path) -> None:
    """GEAK's published kernels (imported) beside kernforge's geak preset on the same task: two
    methods, each with its own outcomes, in every table."""
    runs = tmp_path / "runs"
    run_dir(runs, "own-1", [WRONG, CORRECT], method="geak")
    run_dir(runs, "own-2", [], method="geak", finish="no kernel")
    imported = ResultStore(tmp_path / "imported")
    imported.extend(
        [
            cpu_row("softmax_fp32", "geak", attempt=0, iteration=1, source="import:geak"),
            cpu_row("softmax_fp32", "geak", passed=False, seed=1, attempt=0, source="import:geak"),
            cpu_row("softmax_fp32", "geak", passed=False, seed=2, attempt=0, source="import:geak"),
        ]
    )
    rows, _, _ = collect_rows([runs, tmp_path / "imported"])
    assert sorted({r.label() for r in rows}) == ["geak", "geak (imported)"]
    out = tmp_path / "report"
    result = CliRunner().invoke(
        report_app(), [str(runs), str(tmp_path / "imported"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    md = (out / "report.md").read_text()
    speed = section(md, "Speed")
    assert "| geak | 1/2 |" in speed and "| geak (imported) | 1/3 |" in speed
    assert "| geak | 2 | 1 |" in section(md, "Stage pass rates")
    assert "| geak (imported) | 3 | 0 |" in section(md, "Stage pass rates")
    assert "import:geak, kernforge" in md  # sources of rows
    # imported rows' clocks are when kernforge judged them: no throughput line for them
    assert "geak (imported)" not in section(md, "Throughput")
    page = (out / "report.html").read_text()
    assert '<span class="imported">(imported)</span>' in page and "judged here by" in page
