"""`kernforge run --resume ID` with other flags: each is honoured (the budget, --runs-dir: written
into the run's manifest and said in one line) or refused with exit 2 naming the flag; none is
silently dropped."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents import api
from agents.cli.main import app
from agents.core.config import AgentConfig
from agents.core.rundir import RunDir
from agents.core.settings import SettingsError

QUICK = {"kb": "off", "judge.trials": 1, "offline.codegen": False, "agent.candidates": 1}


def _cli(*args: str) -> object:
    return CliRunner().invoke(app, ["run", *args], env={"COLUMNS": "250"})


def _stored_run(runs: Path, run_id: str = "r") -> Path:
    """A run directory holding only a manifest: what `kernforge run` writes before its first step."""
    run = RunDir.create(runs, run_id)
    config = AgentConfig(task="softmax_fp32", device="cpu", runs_dir=str(runs), run_id=run_id)
    run.write_manifest(
        {
            "run_id": run_id,
            "task": {"ref": "softmax_fp32"},
            "device": {"requested": "cpu", "resolved": "cpu"},
            "config": config.to_json(),
        }
    )
    return run.path


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--llm", "offline"], "--llm"),
        (["--method", "geak"], "--method"),
        (["--candidates", "4"], "--candidates"),
        (["--no-benchmark"], "--benchmark"),
        (["--set", "agent.reflect=false"], "--set agent.reflect"),
        (["--set", "judge.trials=1"], "--set judge.trials"),
        (["--task", "softmax_fp32"], "--task"),
        (["--run-id", "other"], "--run-id"),
    ],
)
def test_a_setting_that_cannot_change_mid_run_is_refused_naming_the_flag(
    tmp_path: Path, flags: list[str], named: str
) -> None:
    path = _stored_run(tmp_path)
    before = (path / "manifest.json").read_text()
    result = _cli("--resume", "r", "--runs-dir", str(tmp_path), *flags)
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert f"{named} cannot" in message and "resume" in message
    assert (path / "manifest.json").read_text() == before  # nothing was written


def test_the_python_api_refuses_the_same_settings(tmp_path: Path) -> None:
    _stored_run(tmp_path)
    with pytest.raises(SettingsError, match="method cannot change on --resume"):
        api.resume("r", runs_dir=tmp_path, quiet=True, changes={"method": "geak"})


def test_budget_flags_on_resume_are_written_to_the_manifest_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _stored_run(tmp_path)
    seen = {}

    def drive(ctx, initial, app=None):  # noqa: ANN001, ANN202 - stands in for the graph
        seen["config"], seen["limits"] = ctx.config, ctx.tracker.budget
        return api.RunResult(ctx.run.run_id, ctx.run.path, True, "stub", None, None)

    monkeypatch.setattr(api, "_drive", drive)
    result = _cli(
        "--resume",
        "r",
        "--runs-dir",
        str(tmp_path),
        "--iterations",
        "12",
        "--budget",
        "cost=2.5,wall=8",
        "--set",
        "budget.gpu=30",
    )
    assert result.exit_code == 1, result.output  # the stub found no kernel
    out = " ".join(result.output.split())
    assert "budget.iterations: 8 -> 12 on resume" in out
    assert "budget.cost: None -> 2.5 on resume" in out
    assert "budget.wall: None -> 8.0 on resume" in out
    assert "budget.gpu: None -> 30.0 on resume" in out
    assert f"runs_dir: {tmp_path.resolve()}, as before" in out
    config = seen["config"]
    assert (config.max_iterations, config.max_cost_usd, config.max_wall_s) == (12, 2.5, 8.0)
    assert seen["limits"].max_gpu_s == 30.0  # the tracker counts against the new limits
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["config"]["max_iterations"] == 12 and manifest["config"]["max_gpu_s"] == 30.0
    (resumed,) = manifest["resumes"]
    assert resumed["changed"]["budget.iterations"] == [8, 12]
    (event,) = [e for e in RunDir(path).events() if e["event"] == "resume"]
    assert event["changed"]["budget.cost"] == [None, 2.5]


def test_runs_dir_on_resume_records_where_the_run_now_lives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = _stored_run(tmp_path / "old")
    moved = tmp_path / "new" / "r"
    moved.parent.mkdir()
    old.rename(moved)
    monkeypatch.setattr(
        api,
        "_drive",
        lambda ctx, initial, app=None: api.RunResult("r", ctx.run.path, True, "", None, None),
    )
    result = _cli("--resume", "r", "--runs-dir", str(moved.parent))
    assert result.exit_code == 1, result.output
    out = " ".join(result.output.split())
    assert f"runs_dir: {tmp_path / 'old'} -> {moved.parent.resolve()} on resume" in out
    config = json.loads((moved / "manifest.json").read_text())["config"]
    assert config["runs_dir"] == str(moved.parent.resolve())


def test_an_interrupted_run_resumes_under_a_new_budget_and_a_finished_one_refuses_it(
    tmp_path: Path,
) -> None:
    first = api.run(
        "softmax_fp32",
        llm="offline",
        device="cpu",
        runs_dir=tmp_path,
        settings={**QUICK, "budget.iterations": 1},
        run_id="cut",
        quiet=True,
    )
    assert first.finished
    # drop the last two checkpoints, as a kill between a step's writes and its checkpoint does
    # (tests/test_agent_resume.py): the run has a checkpoint with spend but has not finished
    with sqlite3.connect(first.run_dir / "checkpoint.sqlite") as db:
        newest = [
            row[0]
            for row in db.execute(
                "SELECT checkpoint_id FROM checkpoints ORDER BY checkpoint_id DESC LIMIT 2"
            )
        ]
        db.executemany("DELETE FROM checkpoints WHERE checkpoint_id = ?", [(c,) for c in newest])

    done = _cli("--resume", "cut", "--runs-dir", str(tmp_path), "--tokens", "999999")
    assert done.exit_code == 0, done.output
    assert "budget.tokens: None -> 999999 on resume" in " ".join(done.output.split())
    budget = json.loads((first.run_dir / "summary.json").read_text())["budget"]["limits"]
    assert budget["max_tokens"] == 999999

    refused = _cli("--resume", "cut", "--runs-dir", str(tmp_path), "--iterations", "5")
    assert refused.exit_code == 2, refused.output
    assert "cannot extend a finished run" in " ".join(refused.output.split())
    manifest = json.loads((first.run_dir / "manifest.json").read_text())
    assert manifest["config"]["max_iterations"] == 1 and len(manifest["resumes"]) == 1
