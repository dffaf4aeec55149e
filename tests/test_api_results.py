"""The Python API's bench, import, report and pairs export (agents/api_tools.py): the same work
as their CLI commands, records back, one-line typed errors. CPU only: the offline policy with
the knowledge base off and one judge trial; pairs come from a run directory written by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agents
from agents.bench import BenchError, executor_spec, plan_bench
from knowledge_base import solution_path

GOOD = solution_path("softmax").read_text()
FAST = {"kb": "off", "judge.trials": 1}


def test_bench_then_report_on_its_folder(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    seen: list[str] = []
    result = agents.bench_methods(
        tasks="softmax_fp32",
        methods="offline",
        llm="offline",
        budget="iterations=1",
        settings=FAST,
        device="cpu",
        out=out,
        on_cell=lambda number, total, outcome: seen.append(outcome.status),
    )
    (outcome,) = result.outcomes
    assert seen == ["ran"] and outcome.status == "ran" and outcome.correct
    assert result.plan.benchmark is True  # hidden provenance unless asked otherwise
    (summary,) = result.summary
    assert (summary.label, summary.runs, summary.runs_correct) == ("offline", 1, 1)

    again = agents.bench_methods(
        out=out, resume=True
    )  # the plan from bench.json: nothing left to run
    assert [o.status for o in again.outcomes] == ["complete"]
    assert again.plan.tasks == ["softmax_fp32"] and again.plan.budget == {"budget.iterations": 1}

    report = agents.report([out])
    assert report.out == out / "report" and report.files.html.is_file()
    assert report.files.markdown.is_file() and report.rows and report.scripted == 0
    assert {r.task_id for r in report.rows} == {"softmax_fp32"}


def test_bench_plans_that_cannot_run_are_bench_errors(tmp_path: Path) -> None:
    with pytest.raises(BenchError, match="holds no bench.json"):
        plan_bench(tmp_path / "nothing", resume=True)
    with pytest.raises(BenchError, match="unknown method"):
        agents.bench_methods(tasks="softmax_fp32", methods="nope", out=tmp_path / "b", device="cpu")
    with pytest.raises(BenchError, match="--ray-address goes with --executor ray"):
        executor_spec("local", "ray://head:10001")
    assert executor_spec(None, None) is None and executor_spec("inline").kind == "inline"
    default = plan_bench(tasks="softmax_fp32", llm="offline")
    assert default.out == Path("runs") / "bench-lite" and default.seeds == [0]


def test_import_judges_a_folder_and_says_what_it_could_not(tmp_path: Path) -> None:
    src = tmp_path / "kernels"
    src.mkdir()
    (src / "softmax_fp32.py").write_text(GOOD)
    (src / "not_a_task.py").write_text(GOOD)
    rows: list[str] = []
    imported = agents.import_kernels(
        src, out=tmp_path / "out", device="cpu", trials=1, on_row=lambda r: rows.append(r.task_id)
    )
    assert imported.format == "folder" and imported.found == 2 and not imported.judged_nothing
    assert rows == ["softmax_fp32"] and imported.report.passed == 1
    assert [u.where.endswith("not_a_task.py") for u in imported.report.unknown] == [True]
    assert imported.store.jsonl.is_file()

    nothing = tmp_path / "nothing"
    nothing.mkdir()
    (nothing / "not_a_task.py").write_text(GOOD)
    empty = agents.import_kernels(nothing, out=tmp_path / "out2", device="cpu", trials=1)
    assert empty.judged_nothing and empty.report.unknown  # returned with its reasons

    with pytest.raises(agents.InputError) as missing:
        agents.import_kernels(tmp_path / "absent", out=tmp_path / "out3", device="cpu")
    assert "absent" in str(missing.value) and "\n" not in str(missing.value)


def test_import_calls_on_judging_once_per_judge_call(tmp_path: Path) -> None:
    geak = Path(__file__).resolve().parent / "fixtures" / "public" / "geak"
    judging: list[tuple[str, str]] = []
    imported = agents.import_kernels(
        geak,
        out=tmp_path / "out",
        device="cpu",
        trials=1,
        on_judging=lambda task_id, origin: judging.append((task_id, origin)),
    )
    added = {r.task_id: r for r in imported.report.added}
    # the softmax record carries no kernel: its row is stored without a judge call
    assert sorted(added) == ["add_kernel", "relu_kernel", "softmax_kernel"]
    assert sorted(t for t, _ in judging) == ["add_kernel", "relu_kernel"]
    for task_id, origin in judging:
        assert added[task_id].origin.startswith(origin) and origin.startswith(str(geak))

    judging.clear()  # the same import again: every row is stored already, nothing is judged
    again = agents.import_kernels(
        geak,
        out=tmp_path / "out",
        device="cpu",
        trials=1,
        on_judging=lambda *call: judging.append(call),
    )
    assert judging == [] and len(again.report.already) == 3


def _run_with_a_pair(root: Path) -> Path:
    run = root / "r1"
    run.mkdir(parents=True)
    manifest = {
        "run_id": "r1",
        "created": "2026-12-01T10:00:00+00:00",
        "task": {"id": "softmax_fp32"},
        "llm": "openai:gpt-4o",
        "config": {"method": "aka", "llm": "openai:gpt-4o"},
        "fingerprint": {"device": "cpu"},
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    verdict = {"task_id": "softmax_fp32", "device": "cpu"}
    side = {"node": "generator", "verdict": verdict}
    pair = {
        "failing": {**side, "id": 1, "code": "def softmax(x):\n    return x\n"},
        "fixing": {**side, "id": 2, "code": GOOD},
        "hops": 1,
        "error_class": "numerical_mismatch",
        "fix_class": "numerical stability",
        "fix_reasons": ["fixed"],
        "diff": "--- a\n+++ b\n",
    }
    (run / "pairs.jsonl").write_text(json.dumps(pair) + "\n")
    return run


def test_export_pairs_writes_the_data_set_and_its_card(tmp_path: Path) -> None:
    _run_with_a_pair(tmp_path / "runs")
    result = agents.export_pairs([tmp_path / "runs"], out=tmp_path / "pairs.jsonl")
    assert len(result.pairs.records) == 1 and result.out.is_file() and result.card.is_file()
    (line,) = result.out.read_text().splitlines()
    assert json.loads(line)["fix_class"] == "numerical stability"
    with pytest.raises(agents.InputError, match="unknown format 'csv'"):
        agents.export_pairs([tmp_path / "runs"], out=tmp_path / "p.csv", fmt="csv")


def test_report_without_rows_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(agents.InputError, match="absent"):
        agents.report([tmp_path / "absent"])
    with pytest.raises(agents.InputError, match="holds no results"):
        agents.report([tmp_path])
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "results.jsonl").write_text("")
    with pytest.raises(agents.InputError, match="no result rows in"):
        agents.report([tmp_path / "empty"])
    damaged = tmp_path / "results.parquet"
    damaged.write_bytes(b"PAR1 not really")
    with pytest.raises(agents.InputError, match="no result rows in") as nothing:
        agents.report([damaged])
    (why,) = nothing.value.skipped  # what could not be read, and why
    assert why.startswith(f"{damaged} skipped: {damaged}: not a readable Parquet file")
