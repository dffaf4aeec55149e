"""The CLI in a log: no hard wrap when output is not a terminal, ids never cut, `--json` on the
listings (one JSON document), `--version`, and `-h` on every command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import typer
from typer.testing import CliRunner

from agents.cli.main import app

ROOT = Path(__file__).resolve().parents[1]
NO_KEYS = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": "", "COLUMNS": "80"}
LONG = "level1_19_a_very_long_kernelbench_problem_name_that_runs_past_eighty_columns_ReLU"


def invoke(*args: str, env: dict[str, str] | None = None) -> object:
    return CliRunner().invoke(app, list(args), env={**NO_KEYS, **(env or {})})


def long_folder(tmp_path: Path) -> Path:
    """A folder suite: one KernelBench file with an id longer than 80 columns, one that does
    not load and whose name and reason are long too."""
    folder = tmp_path / "suite"
    folder.mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "kernelbench" / "relu.py", folder / f"{LONG}.py")
    (folder / ("broken_" + "x" * 90 + ".py")).write_text("x = (\n")
    return folder


def test_tasks_list_never_cuts_an_id_and_wraps_no_line_in_a_log(tmp_path: Path) -> None:
    from benchmarks import load_all

    result = invoke("tasks", "list")
    assert result.exit_code == 0, result.output
    assert "…" not in result.stdout
    cells = {cell.strip() for line in result.stdout.splitlines() for cell in line.split("│")}
    assert set(load_all()) <= cells  # every id whole, in a cell of its own

    result = invoke("tasks", "list", "--suite", str(long_folder(tmp_path)))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any(f"│ {LONG} │" in line for line in lines)
    not_loaded = [line for line in lines if line.startswith("not loaded")]
    assert len(not_loaded) == 1 and "x" * 90 + ".py" in not_loaded[0]
    assert not_loaded[0].endswith("'(' was never closed")  # the reason on the same line


def test_a_long_error_is_one_line_on_stderr_of_a_real_process(tmp_path: Path) -> None:
    """The console script as a user pipes it: stdout and stderr are files, not a terminal."""
    ref = "softmax_" + "x" * 120
    proc = subprocess.run(
        [sys.executable, "-m", "agents.cli", "tasks", "show", ref],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "COLUMNS": "80"},
        timeout=300,
    )
    assert proc.returncode == 2
    assert proc.stderr == f"error: unknown task '{ref}'; `kernforge tasks list` shows them\n"
    assert proc.stdout == ""


def test_a_usage_error_in_a_log_is_plain_text_without_a_box() -> None:
    result = invoke("tasks", "list", "--no-such-option-" + "y" * 80)
    assert result.exit_code == 2
    assert "╭" not in result.stderr and "│" not in result.stderr
    assert any(
        line.startswith("Error: No such option: --no-such-option-" + "y" * 80)
        for line in result.stderr.splitlines()
    )


def test_the_listings_print_one_json_document(tmp_path: Path) -> None:
    from benchmarks import load_all

    listed = json.loads(invoke("tasks", "list", "--json").stdout)
    assert [t["id"] for t in listed["tasks"]] == list(load_all())
    assert listed["not_loaded"] == []
    softmax = next(t for t in listed["tasks"] if t["id"] == "softmax_fp32")
    assert softmax["category"] and softmax["cpu_shapes"] >= 1 and softmax["flagged"] == []

    folder = json.loads(
        invoke("tasks", "list", "--suite", str(long_folder(tmp_path)), "--json").stdout
    )
    assert [t["id"] for t in folder["tasks"]] == [LONG]
    assert len(folder["not_loaded"]) == 1 and "never closed" in folder["not_loaded"][0]["reason"]

    lite = json.loads(
        invoke("tasks", "list", "--suite", "lite", "--category", "reduce", "--json").stdout
    )
    assert lite["tasks"] and {t["category"] for t in lite["tasks"]} == {"reduce"}

    shown = json.loads(invoke("tasks", "show", "softmax_fp32", "--json").stdout)
    assert shown["id"] == "softmax_fp32" and shown["entry_point"]
    assert any(s["phase"] == "cpu" for s in shown["shapes"]) and "atol" in shown["tolerance"]


def test_the_kb_listings_print_one_json_document(tmp_path: Path) -> None:
    env = {"KERNFORGE_KB_DIR": str(tmp_path / "kb"), "KERNFORGE_KB_URL": ""}
    listed = invoke("kb", "list", "--json", env=env)
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.stdout) == []  # an empty store lists nothing, and builds nothing
    stats = invoke("kb", "stats", "--json", env=env)
    assert stats.exit_code == 0, stats.output
    assert json.loads(stats.stdout)["chunks"] == 0


def test_import_json_says_what_was_not_judged_and_exits_1(tmp_path: Path) -> None:
    folder = tmp_path / "kernels"
    folder.mkdir()
    (folder / "no_such_task_anywhere.py").write_text("def f():\n    return 1\n")
    result = invoke("import", str(folder), "--out", str(tmp_path / "out"), "--json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["judged"] == [] and len(report["unknown"]) == 1
    assert "no_such_task_anywhere" in report["unknown"][0]


def test_version_is_the_package_version() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout == f"kernforge {pyproject['project']['version']}\n"


def _command_paths(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [path]
    for name, sub in getattr(command, "commands", {}).items():
        paths += _command_paths(sub, (*path, name))
    return paths


def test_every_command_takes_h_as_help() -> None:
    paths = _command_paths(typer.main.get_command(app))
    assert ("kb", "list") in paths and ("tasks", "show") in paths and ("run",) in paths
    for path in paths:
        short, long = invoke(*path, "-h"), invoke(*path, "--help")
        assert short.exit_code == 0, (path, short.output)
        assert short.stdout == long.stdout and "Usage:" in short.stdout, path


def test_a_negative_budget_is_a_usage_error_before_any_run_starts(tmp_path: Path) -> None:
    """`--budget wall=-5` used to start a run and end it in an internal error with a trace."""
    runs = tmp_path / "runs"
    for budget, key in (("wall=-5", "wall"), ("cost=-1", "cost"), ("tokens=-3", "tokens")):
        result = invoke(
            "run", "--task", "softmax_fp32", "--llm", "offline", "--device", "cpu",
            "--budget", budget, "--runs-dir", str(runs),
        )  # fmt: skip
        assert result.exit_code == 2, result.output
        assert f"budget.{key} must be >= 0" in result.stderr
        assert "internal error" not in result.output
    assert not runs.exists() or not any(runs.iterdir())
