"""One table of settings (agents/core/settings.py SETTINGS): the AgentConfig fields, the
`kernforge run` options, the environment variables and the judge's defaults all come from it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from agents.core.config import AgentConfig
from agents.core.settings import BY_KEY, SETTINGS, Setting, resolve
from benchmarks.harness.judge_config import REMEASURE_ROUNDS, JudgeConfig

# The attribute names the nodes read (ctx.config.max_iterations, ...): renaming a Setting's attr
# would break them, so they are pinned here.
NODE_ATTRIBUTES = (
    "llm method device runs_dir seed benchmark kb max_iterations max_tokens max_cost_usd "
    "max_wall_s max_gpu_s candidates reflect lineage max_repairs restart first_success codegen "
    "optimize ancestors llm_tests nocode_retries history_window target_attainment dropout "
    "dropout_after dropout_every judge_trials judge_timeout_s remeasure_rounds ncu sweep "
    "sweep_max_configs sweep_finalists sweep_min_gain"
).split()


def _command(app: typer.Typer, name: str = "run") -> object:
    return typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]


def _option_names(command: object) -> set[str]:
    names: set[str] = set()
    for param in command.params:  # type: ignore[attr-defined]
        names.update(param.opts)
        names.update(param.secondary_opts)
    return names


def test_every_setting_is_an_agent_config_field_with_its_default() -> None:
    fields = {f.name: f for f in dataclasses.fields(AgentConfig)}
    for s in SETTINGS:
        assert s.attr in fields, f"{s.key} has no AgentConfig field {s.attr}"
        assert fields[s.attr].default == s.default, s.key
    setting_attrs = {s.attr for s in SETTINGS}
    assert set(fields) - setting_attrs == {"task", "run_id"}
    assert len(setting_attrs) == len(SETTINGS)  # no two settings share an attribute


def test_the_attribute_names_nodes_read_stay_readable() -> None:
    config = AgentConfig(task="softmax_fp32")
    for name in NODE_ATTRIBUTES:
        assert hasattr(config, name), name
    assert config.llm == "offline" and config.offline  # no llm given: the offline policy
    assert config.budget.max_tokens is None and config.run_id is None


def test_a_config_from_settings_carries_every_value_under_its_attribute(tmp_path: Path) -> None:
    s = resolve(
        {"budget.iterations": 4, "offline.codegen": False, "profile.ncu": False, "seed": 9},
        env={},
        user_file=tmp_path / "u.toml",
        project_file=tmp_path / "p.toml",
    )
    config = AgentConfig.from_settings("softmax_fp32", s, run_id="r")
    for setting in SETTINGS:
        assert getattr(config, setting.attr) == s[setting.key], setting.key
    assert (config.max_iterations, config.codegen, config.ncu, config.seed) == (4, False, False, 9)
    assert AgentConfig.from_json(config.to_json()) == config


def test_config_limits_come_from_the_table() -> None:
    with pytest.raises(ValueError, match=r"agent\.candidates must be >= 1"):
        AgentConfig(task="t", candidates=0)
    with pytest.raises(ValueError, match=r"budget\.iterations must be >= 1"):
        AgentConfig(task="t", max_iterations=0)
    with pytest.raises(ValueError, match=r"dropout\.after must be >= 0"):
        AgentConfig(task="t", dropout_after=-1)
    with pytest.raises(ValueError, match="agent.lineage must be shared or per_slot"):
        AgentConfig(task="t", lineage="tree")
    # a negative budget is a usage error before the run starts, not the budget's internal error
    for attr, key in (
        ("max_tokens", "tokens"),
        ("max_cost_usd", "cost"),
        ("max_wall_s", "wall"),
        ("max_gpu_s", "gpu"),
    ):
        with pytest.raises(ValueError, match=rf"budget\.{key} must be >= 0"):
            AgentConfig(task="t", **{attr: -5})


def test_every_cli_settable_key_is_an_option_of_kernforge_run() -> None:
    from agents.cli.main import app

    names = _option_names(_command(app))
    flagged = [s for s in SETTINGS if s.flag]
    assert len(flagged) >= 13
    for s in flagged:
        assert s.flag in names, s.key
        if s.type is bool:
            assert "--no-" + s.flag.removeprefix("--") in names, s.key
    assert {"--task", "--resume", "--budget", "--set", "--run-id", "--show-config"} <= names


def test_adding_a_setting_with_a_flag_adds_the_option(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    main = importlib.import_module("agents.cli.main")  # the module, not agents.cli's main()
    extra = Setting("agent.extra", "int", 1, "a new knob", flag="--extra")
    monkeypatch.setattr(main, "SETTINGS", (*SETTINGS, extra))
    seen: dict[str, object] = {}

    def command(quiet: bool = typer.Option(False, "--quiet"), **setting_flags: object) -> None:
        seen.update(setting_flags)

    app = typer.Typer()
    app.command("run")(main._with_setting_options(command))
    app.command("other")(lambda: None)
    assert "--extra" in _option_names(_command(app))
    result = CliRunner().invoke(app, ["run", "--extra", "5", "--candidates", "3"])
    assert result.exit_code == 0, result.output
    assert seen["setting_agent_extra"] == 5 and seen["setting_agent_candidates"] == 3
    assert seen["setting_llm"] is None  # not given


def test_every_setting_has_an_environment_variable_and_a_toml_key(tmp_path: Path) -> None:
    envs = [s.env for s in SETTINGS]
    assert len(set(envs)) == len(envs)
    assert BY_KEY["budget.iterations"].env == "KERNFORGE_BUDGET_ITERATIONS"
    s = resolve(
        {},
        env={"KERNFORGE_OFFLINE_CODEGEN": "false", "KERNFORGE_JUDGE_TIMEOUT": "12"},
        user_file=tmp_path / "u.toml",
        project_file=tmp_path / "p.toml",
    )
    assert s["offline.codegen"] is False and s["judge.timeout"] == 12.0


def test_cli_flags_set_and_budget_layer_over_env_and_toml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.cli.main import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("KERNFORGE_AGENT_CANDIDATES", "5")
    monkeypatch.setenv("KERNFORGE_DROPOUT_AFTER", "6")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / "kernforge.toml").write_text("seed = 2\n[budget]\niterations = 5\ncost = 1.0\n")
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--show-config",
            "--candidates",
            "3",
            "--no-benchmark",
            "--budget",
            "iterations=7,tokens=100",
            "--tokens",
            "200",
            "--set",
            "agent.reflect=false",
        ],
        env={"COLUMNS": "250"},
    )
    assert result.exit_code == 0, result.output
    rows = {
        line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:4]]
        for line in result.output.splitlines()
        if line.count("│") >= 3
    }
    assert rows["agent.candidates"] == ["3", "flag --agent.candidates"]
    assert rows["benchmark"] == ["false", "flag --benchmark"]
    assert rows["budget.iterations"] == ["7", "flag --budget.iterations"]
    assert rows["budget.tokens"] == ["200", "flag --budget.tokens"]  # the flag beats --budget
    assert rows["budget.cost"][0] == "1.0" and rows["budget.cost"][1].startswith("project file")
    assert rows["agent.reflect"] == ["false", "flag --agent.reflect"]
    assert rows["dropout.after"] == ["6", "environment KERNFORGE_DROPOUT_AFTER"]
    assert rows["seed"][0] == "2" and set(rows) == set(BY_KEY)  # every key, once


def test_the_judges_defaults_live_in_judge_config() -> None:
    import inspect

    from agents import api
    from agents.cli.main import app
    from benchmarks.harness.judge import JudgeConfig as Reexported
    from benchmarks.harness.remeasure import interleaved

    assert Reexported is JudgeConfig
    assert BY_KEY["judge.timeout"].default == JudgeConfig.timeout_s
    assert BY_KEY["judge.remeasure_rounds"].default == REMEASURE_ROUNDS
    assert inspect.signature(interleaved).parameters["rounds"].default == REMEASURE_ROUNDS
    params = inspect.signature(api.evaluate).parameters
    assert params["trials"].default == JudgeConfig.trials
    assert params["timeout_s"].default == JudgeConfig.timeout_s
    defaults = {p.name: p.default for p in _command(app, "eval").params}  # type: ignore[attr-defined]
    assert defaults["trials"] == JudgeConfig.trials
    assert defaults["timeout"] == JudgeConfig.timeout_s


def test_reading_the_settings_and_the_cli_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = "import sys, agents.cli.main, agents.core.config; print('torch' in sys.modules)"
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert out.stdout.strip() == "False", out.stderr
