"""`kernforge import` on outputs in the forms GEAK and KernelAgent publish (files written for these
tests: tests/fixtures/public/geak, tests/fixtures/public/kernelagent), judged on the CPU against
the problems they carry, and compared with kernforge's own rows in one report."""

import json
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from agents.cli.import_cmd import import_cmd
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import get_task, load_folder
from benchmarks.results.import_tasks import (
    TaskFiles,
    geak_task_source,
    model_new_from,
    needs_cuda,
)
from benchmarks.results.importers import extract_code, import_kernels, read_kernelagent
from benchmarks.results.report import write_report
from benchmarks.results.rows import ResultStore, collect_rows, row_from_verdict

PUBLIC = Path(__file__).resolve().parent / "fixtures" / "public"
CPU = JudgeConfig(device="cpu", trials=1, timeout_s=240)


def flat(output: str) -> str:
    return " ".join(output.split())


def cli():
    app = typer.Typer()
    app.command()(import_cmd)
    return app


@pytest.fixture(scope="module")
def geak(tmp_path_factory):
    """The GEAK fixture imported once through the command line: (its result, the results folder)."""
    out = tmp_path_factory.mktemp("geak") / "results"
    result = CliRunner().invoke(
        cli(), [str(PUBLIC / "geak"), "--out", str(out), "--device", "cpu", "--trials", "1"]
    )
    return result, out


def test_geak_records_are_judged_on_their_own_label_and_test_code(geak):
    result, out = geak
    assert result.exit_code == 0, result.output
    text = flat(result.output)
    rows = {(r.task_id, r.attempt): r for r in ResultStore(out).rows()}
    assert set(rows) == {("add_kernel", 0), ("relu_kernel", 0), ("softmax_kernel", 0)}
    # the reference is a Triton kernel (run in the interpreter) that writes into `out`, as
    # GEAK's kernel does: out is an output of the task, not a mutated input
    add = rows[("add_kernel", 0)]
    assert add.passed and add.category == "tritonbench" and add.source == "import:geak"
    assert rows[("relu_kernel", 0)].error_class == "numerical_mismatch"
    assert rows[("softmax_kernel", 0)].error_class == "no_kernel"
    # each task was written as a file that loads like any other
    suite = load_folder(out / "tasks" / "geak")
    assert sorted(t.id for t in suite.tasks) == ["add_kernel", "relu_kernel", "softmax_kernel"]
    assert suite.not_loaded == []
    # per item: what was judged, skipped and why
    assert "3 judged (1 correct" in text
    assert "not judged" in text and "requires a CUDA device (line 15: assert x.is_cuda)" in text
    assert "its problem (label + test_code) does not load: field <file>: syntax error" in text
    assert "no task name: none of task_id" in text


def test_a_geak_import_that_judges_nothing_exits_non_zero(tmp_path):
    record = json.loads((PUBLIC / "geak" / "tutorial_results_0.jsonl").read_text().splitlines()[2])
    assert needs_cuda(extract_code(record["predict"]))  # its kernel asserts a CUDA tensor
    src = tmp_path / "only_cuda_0.jsonl"
    src.write_text(json.dumps(record) + "\n" + "not json\n")
    result = CliRunner().invoke(
        cli(), [str(src), "--out", str(tmp_path / "out"), "--device", "cpu"]
    )
    assert result.exit_code == 1, result.output
    text = flat(result.output)
    assert "0 judged" in text and "nothing could be judged" in text
    assert "not judged" in text and "relu_kernel: the kernel requires a CUDA device" in text


def test_kernelagent_sessions_are_judged_on_their_problem_txt(tmp_path):
    root = tmp_path / "ka"
    shutil.copytree(PUBLIC / "kernelagent", root)
    plan = read_kernelagent(root)
    report = import_kernels(plan, ResultStore(tmp_path / "out"), judge_config=CPU)
    rows = {(r.task_id, r.seed): r for r in report.added}
    swish, linear = rows[("session_20261201_101500", 0)], rows[("session_20261201_103000", 0)]
    assert swish.passed and swish.category == "kernelbench", swish.message
    assert (
        "ModelNew added: Model's __init__, and a forward calling kernel_function() with its inputs"
        in swish.origin
    )
    # kernel_function(x, weight, bias): ModelNew holds Model's nn.Linear and passes its parameters
    assert linear.passed, linear.message
    assert "then the Model's parameters in order" in linear.origin
    # a later session of the same problem is seed 1 of the same task; it produced no kernel
    failed = rows[("session_20261201_101500", 1)]
    assert failed.error_class == "no_kernel" and "no final_kernel.py" in failed.message
    # a kernel asserting CUDA is not the method failing on the CPU: not judged, no row
    [cuda] = report.not_judged
    assert "session_20261201_113000" in cuda.where and "requires a CUDA device" in cuda.reason
    assert len(report.added) == 3


def test_the_model_new_wrapper_is_built_from_the_problems_init(tmp_path):
    problem = (PUBLIC / "kernelagent" / "session_20261201_103000" / "problem.txt").read_text()
    task = TaskFiles(tmp_path).task("linear_relu", problem)
    assert task.entry_kind == "class" and (tmp_path / "linear_relu.py").read_text() == problem
    code = (PUBLIC / "kernelagent" / "session_20261201_103000" / "final_kernel.py").read_text()
    adapted, note = model_new_from(code, task)
    assert (
        "class ModelNew(nn.Module):" in adapted
        and "self.linear = nn.Linear(in_features, out_features)" in adapted
    )
    assert "return kernel_function(x, *self.parameters())" in adapted and note
    assert model_new_from(adapted, task) == (adapted, "")  # a ModelNew already there: unchanged


def test_a_geak_record_with_label_and_test_code_is_a_tritonbench_file():
    record = json.loads((PUBLIC / "geak" / "tutorial_results_0.jsonl").read_text().splitlines()[0])
    source = geak_task_source(record["label"], record["test_code"])
    assert source.startswith(record["label"].rstrip()) and "\n" + "#" * 80 + "\n" in source
    assert geak_task_source("REFERENCE", "") is None and geak_task_source(None, "x") is None


def test_imported_rows_and_kernforge_rows_compare_in_one_report(geak, tmp_path):
    _, out = geak
    task = get_task(str(out / "tasks" / "geak" / "add_kernel.py"))
    verdict = evaluate(task, PUBLIC / "candidates" / "kbx_add_out_good.py", CPU)
    ours = ResultStore(tmp_path / "ours")
    ours.append(
        row_from_verdict(verdict, method="kernforge", category=task.category, origin="ours")
    )
    rows, sources, _ = collect_rows([out, tmp_path / "ours"])
    assert {r.method for r in rows if r.task_id == "add_kernel"} == {"geak", "kernforge"}
    files = write_report(rows, tmp_path / "report", sources, "GEAK vs kernforge")
    markdown = files.markdown.read_text()
    assert "geak" in markdown and "kernforge" in markdown and "add_kernel" in markdown
