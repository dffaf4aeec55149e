"""One "did you mean" rule (benchmarks.suggest, stdlib difflib) for every misspelt name, from
every command: one line on stderr, exit 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.cli.main import app
from benchmarks import close_names, unknown_name

NO_KEYS = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}
SUITES = "(expected one of full, lite, quant, serving)"


def test_close_names_keeps_the_best_and_its_near_ties_only() -> None:
    ids = ["softmax_fp32", "softmax_fp16", "softmax_bf16", "softplus_fp32", "matmul_fp32"]
    assert close_names("softmx_fp32", ids) == ["softmax_fp32"]
    assert sorted(close_names("softmax", ids)) == ["softmax_bf16", "softmax_fp16", "softmax_fp32"]
    assert close_names("SOFTMAX_FP32", ids) == ["softmax_fp32"]  # case does not matter
    assert close_names("rms", ids) == []


def test_unknown_name_is_one_line_with_a_suggestion_a_hint_or_the_few_choices() -> None:
    many = [f"task_{i:02d}" for i in range(20)]  # too many to list whole
    ids = [*many, "softmax_fp16", "softmax_fp32", "gelu_erf_fp32"]
    assert unknown_name("task", "softmx_fp32", ids) == (
        "unknown task 'softmx_fp32'; did you mean 'softmax_fp32'?"
    )
    assert unknown_name("task", "softmax_fp8", ids) == (
        "unknown task 'softmax_fp8'; did you mean 'softmax_fp32' or 'softmax_fp16'?"
    )
    assert unknown_name("task", "zzz", ids, "see the list") == "unknown task 'zzz'; see the list"
    assert unknown_name("task", "zzz", ids) == "unknown task 'zzz'"
    # a handful of names is listed whole, after the suggestion or instead of one
    assert unknown_name("method", "offlin", ["aka", "offline"]) == (
        "unknown method 'offlin'; did you mean 'offline'? (expected one of aka, offline)"
    )
    assert unknown_name("device", "gpu0", ["auto", "cuda", "cpu"]) == (
        "unknown device 'gpu0'; expected one of auto, cuda, cpu"
    )
    assert unknown_name("suite", "zzz", ["full", "lite"], "or a folder") == (
        "unknown suite 'zzz'; or a folder"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["tasks", "show", "softmx_fp32"],
            "unknown task 'softmx_fp32'; did you mean 'softmax_fp32'?",
        ),
        (
            ["eval", "--task", "softmx_fp32", "--candidate", "nowhere.py"],
            "unknown task 'softmx_fp32'; did you mean 'softmax_fp32'?",
        ),
        (
            ["run", "--task", "softmx_fp32"],
            "unknown task 'softmx_fp32'; did you mean 'softmax_fp32'?",
        ),
        (
            ["run", "--task", "softmax_fp32", "--method", "offlin"],
            "flag --method: unknown method 'offlin'; did you mean 'offline'? "
            "(expected one of aka, offline, single-shot, kernelagent, geak)",
        ),
        (
            ["run", "--task", "softmax_fp32", "--device", "cdua"],
            "flag --device: unknown device 'cdua'; did you mean 'cuda'? "
            "(expected one of auto, cuda, cpu)",
        ),
        (
            ["run", "--task", "softmax_fp32", "--set", "budget.iteratoins=2"],
            "--set 'budget.iteratoins=2': unknown setting 'budget.iteratoins'; "
            "did you mean 'budget.iterations'?",
        ),
        (
            ["tasks", "list", "--suite", "lit"],
            "unknown suite 'lit'; did you mean 'lite'? " + SUITES,
        ),
        (
            ["tasks", "list", "--category", "activaton"],
            "unknown category 'activaton'; did you mean 'activation'?",
        ),
        (
            ["tasks", "check", "--suite", "lit"],
            "unknown suite 'lit'; did you mean 'lite'? " + SUITES,
        ),
        (
            ["tasks", "check", "--tasks", "softmax_fp32,softmx_fp16"],
            "unknown task 'softmx_fp16'; did you mean 'softmax_fp16'?",
        ),
        (
            ["bench", "--tasks", "softmx_fp32", "--llm", "offline"],
            "unknown task 'softmx_fp32'; did you mean 'softmax_fp32'?",
        ),
        (
            ["bench", "--methods", "offlin", "--llm", "offline"],
            "unknown method 'offlin'; did you mean 'offline'? "
            "(expected one of aka, offline, single-shot, kernelagent, geak)",
        ),
        (
            ["bench", "--suite", "lit", "--llm", "offline"],
            "unknown suite 'lit'; did you mean 'lite'? " + SUITES,
        ),
        (
            ["kb", "search", "--task", "softmx_fp32"],
            "unknown task 'softmx_fp32'; did you mean 'softmax_fp32'?",
        ),
        (
            ["kb", "search", "x", "--kind", "kernl"],
            "unknown kind 'kernl'; did you mean 'kernel'? (expected one of kernel, doc)",
        ),
        (
            ["kb", "list", "--kind", "dox"],
            "unknown kind 'dox'; did you mean 'doc'? (expected one of kernel, doc)",
        ),
    ],
)
def test_a_misspelt_name_gets_the_same_one_line_answer_from_every_command(
    args: list[str], message: str, tmp_path: Path
) -> None:
    env = {**NO_KEYS, "KERNFORGE_KB_DIR": str(tmp_path / "kb"), "KERNFORGE_KB_URL": ""}
    env["KERNFORGE_RUNS_DIR"] = str(tmp_path / "runs")
    if args[0] == "bench":
        args = [*args, "--out", str(tmp_path / "bench")]
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {message}\n"
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_misspelt_run_id_is_suggested_from_the_runs_folder(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    (runs / "20261201-softmax_fp32-ab12").mkdir(parents=True)
    (runs / "20261201-softmax_fp32-ab12" / "manifest.json").write_text("{}")
    result = CliRunner().invoke(
        app, ["run", "--resume", "20261201-softmax_fp32-ab21", "--runs-dir", str(runs)], env=NO_KEYS
    )
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        "error: unknown run '20261201-softmax_fp32-ab21'; "
        "did you mean '20261201-softmax_fp32-ab12'? (expected one of 20261201-softmax_fp32-ab12)\n"
    )


def test_a_misspelt_setting_in_a_project_file_is_suggested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "kernforge.toml").write_text("[budget]\niteratoins = 3\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        app, ["run", "--task", "softmax_fp32", "--show-config"], env=NO_KEYS
    )
    assert result.exit_code == 2, result.output
    assert "unknown setting 'budget.iteratoins'; did you mean 'budget.iterations'?" in result.stderr
    assert len(result.stderr.splitlines()) == 1
