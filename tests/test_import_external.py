"""`kernforge import`: kernels from a folder, GEAK JSONL and KernelAgent sessions, judged for real
on the CPU (Triton interpreter) with the softmax reference solution and a broken copy."""

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from agents.cli.import_cmd import import_cmd
from benchmarks.harness.judge import JudgeConfig
from benchmarks.results.importers import (
    adapt_entry_point,
    detect_format,
    extract_code,
    import_kernels,
    read_geak,
    read_kernelagent,
    resolve_task,
)
from benchmarks.results.rows import ResultStore, all_tasks
from knowledge_base import solution_path

TESTS = Path(__file__).resolve().parent
GOOD = solution_path("softmax").read_text()
BROKEN = (TESTS / "known_bad" / "softmax.py").read_text()  # NaN on outlier rows
CPU = JudgeConfig(device="cpu", trials=1, timeout_s=120)


def flat(output: str) -> str:
    """CLI output with rich's line wrapping undone."""
    return " ".join(output.split())


def test_folder_of_kernels_named_by_task(tmp_path):
    src = tmp_path / "kernels"
    src.mkdir()
    (src / "softmax_fp32.py").write_text(GOOD)
    (src / "softmax.py").write_text(BROKEN)  # a task name: resolved with --dtype
    (src / "not_a_task.py").write_text(GOOD)
    (src / "notes.txt").write_text("hello")
    store = ResultStore(tmp_path / "out")
    from benchmarks.results.importers import read_folder

    report = import_kernels(
        read_folder(src), store, dtype="fp32", judge_config=CPU, model="someone:gpt"
    )
    # softmax.py -> softmax_fp32, the same row as softmax_fp32.py, which wins: named by task id
    assert len(report.added) == 1 and report.already == []
    assert [u.where.endswith("not_a_task.py") for u in report.unknown] == [True]
    assert "not a kernforge task" in report.unknown[0].reason
    assert any("notes.txt" in s.where for s in report.skipped)
    assert any(
        s.where.endswith("softmax.py") and "already given by" in s.reason for s in report.skipped
    )
    row = report.added[0]
    assert (
        row.source == "import:folder"
        and row.method == "external"
        and row.category == "normalization"
    )
    assert row.passed and row.stage_reached == "no_fallback" and not row.perf_measured
    assert row.geomean_speedup_eager is None  # CPU: not measured
    assert store.parquet.is_file() and len(ResultStore(tmp_path / "out")) == 1


def test_geak_jsonl_with_good_broken_and_unusable_lines(tmp_path):
    out = tmp_path / "geak_run_0.jsonl"  # GEAK names its outputs <root>_<iter>.jsonl
    lines = [
        json.dumps(
            {
                "instruction": "softmax",
                "label": "REFERENCE, never judged",
                "filename": "softmax_fp32.py",
                "test_code": "...",
                "predict": f"```python\n{GOOD}\n```",
            }
        ),
        json.dumps({"task": "softmax_fp16", "predict": BROKEN}),
        "this is not json",
        json.dumps({"filename": "fancy_op.py", "predict": GOOD}),
        json.dumps({"predict": GOOD}),
        json.dumps({"filename": "rmsnorm_fp32.py", "predict": ""}),
        json.dumps(["a", "list"]),
    ]
    out.write_text("\n".join(lines) + "\n")
    plan = read_geak(out)
    assert [k.name for k in plan.kernels] == [
        "softmax_fp32",
        "softmax_fp16",
        "fancy_op",
        "rmsnorm_fp32",
    ]
    assert all(k.attempt == 0 and k.iteration == 1 for k in plan.kernels)
    assert plan.kernels[0].code.startswith('"""Row softmax')  # fence removed; "label" ignored
    skipped = {s.where.rsplit(":", 1)[1]: s.reason for s in plan.skipped}
    assert set(skipped) == {"3", "5", "7"}
    assert (
        "not a JSON object" in skipped["3"]
        and "no task name" in skipped["5"]
        and "expected a JSON object" in skipped["7"]
    )

    store = ResultStore(tmp_path / "results")
    report = import_kernels(plan, store, judge_config=CPU)
    by_task = {r.task_id: r for r in report.added}
    assert set(by_task) == {"softmax_fp32", "softmax_fp16", "rmsnorm_fp32"}
    assert by_task["softmax_fp32"].passed and by_task["softmax_fp32"].source == "import:geak"
    assert not by_task["softmax_fp16"].passed and by_task["softmax_fp16"].error_class in (
        "nan_inf_mismatch",
        "numerical_mismatch",
    )
    assert (
        by_task["rmsnorm_fp32"].error_class == "no_kernel"
        and "empty 'predict'" in by_task["rmsnorm_fp32"].message
    )
    assert [u.where.endswith(":4") for u in report.unknown] == [True]
    # resumable: the same import again judges nothing
    again = import_kernels(read_geak(out), store, judge_config=CPU)
    assert again.added == [] and len(again.already) == 3


def test_geak_memory_files_are_not_outputs(tmp_path):
    (tmp_path / "run_mem_0.json").write_text(
        json.dumps({"softmax.py": {"call_candidate": None, "exe_candidate": None}})
    )
    plan = read_geak(tmp_path)
    assert plan.kernels == [] and "memory file" in plan.skipped[0].reason


def test_kernelagent_sessions_with_the_kernel_function_convention(tmp_path):
    root = tmp_path / "ka"
    good = root / "softmax_fp32" / "session_20250101_120000_1"
    good.mkdir(parents=True)
    (good / "problem.txt").write_text("row softmax")
    (good / "seed_0.py").write_text("def kernel_function(x):\n    raise NotImplementedError\n")
    (good / "final_kernel.py").write_text(GOOD.replace("def softmax(", "def kernel_function("))
    (good / "result.json").write_text(json.dumps({"success": True, "worker_id": 0, "rounds": 2}))
    failed = (
        root / "softmax_fp32" / "session_20250101_130000_2"
    )  # a second session of the task: seed 1
    failed.mkdir()
    (failed / "problem.txt").write_text("row softmax")
    (failed / "seed_0.py").write_text("x = 1\n")
    assert detect_format(root) == "kernelagent"
    plan = read_kernelagent(root)
    assert [(k.name, k.seed, k.code is not None) for k in plan.kernels] == [
        ("softmax_fp32", 0, True),
        ("softmax_fp32", 1, False),
    ]
    store = ResultStore(tmp_path / "out")
    report = import_kernels(plan, store, judge_config=CPU)
    ok, none = sorted(report.added, key=lambda r: r.seed)
    assert (
        ok.passed
        and "wrapper of kernel_function" in ok.origin
        and ok.source == "import:kernelagent"
    )
    assert (
        none.error_class == "no_kernel" and "no final_kernel.py" in none.message and not none.passed
    )


def test_entry_point_wrapper_only_when_the_entry_point_is_missing():
    task = all_tasks()["softmax_fp32"]
    code, note = adapt_entry_point("def kernel_function(x):\n    return x\n", task)
    assert "def softmax(x):\n    return kernel_function(x)" in code and note
    same, note = adapt_entry_point(GOOD, task)
    assert same == GOOD and note == ""


def test_task_names_resolve_or_say_what_to_do():
    tasks = all_tasks()
    assert resolve_task("softmax_fp16", tasks).id == "softmax_fp16"
    assert resolve_task("softmax", tasks, "bf16").id == "softmax_bf16"
    with pytest.raises(KeyError, match="several dtypes"):
        resolve_task("softmax", tasks)
    with pytest.raises(KeyError, match="not a kernforge task"):
        resolve_task("softmaxx_fp99", tasks)


def test_extract_code_takes_the_fenced_block():
    assert extract_code("Here:\n```python\nx = 1\n```\nthanks") == "x = 1\n"
    assert extract_code("x = 2\n") == "x = 2\n"


def test_import_command(tmp_path):
    src = tmp_path / "k"
    src.mkdir()
    (src / "softmax_fp32.py").write_text(GOOD)
    (src / "mystery.py").write_text(GOOD)
    app = typer.Typer()
    app.command()(import_cmd)
    result = CliRunner().invoke(
        app, [str(src), "--out", str(tmp_path / "out"), "--device", "cpu", "--trials", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "1 judged (1 correct; speed not measured (no GPU))" in flat(result.output)
    assert "unknown task" in flat(result.output) and "mystery" in flat(result.output)
    # a line as the judge call starts, before its result (stderr, mixed in by the runner)
    out = flat(result.output)
    start = out.index("import: judging softmax_fp32 from")
    assert start < out.index("softmax_fp32 seed 0 attempt")
    bad = CliRunner().invoke(app, [str(tmp_path / "missing"), "--out", str(tmp_path / "out")])
    assert bad.exit_code == 2 and "does not exist" in flat(bad.output)
