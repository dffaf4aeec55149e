"""Settings: default < preset < user file < project file < environment < flag, each value with
its source; `kernforge run --show-config` prints them."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.core.config import AgentConfig
from agents.core.settings import SettingsError, parse_budget, resolve

NO_KEYS: dict[str, str] = {}


def _files(tmp_path: Path, user: str | None = None, project: str | None = None) -> dict[str, Path]:
    u, p = tmp_path / "user.toml", tmp_path / "project" / "kernforge.toml"
    p.parent.mkdir(parents=True)
    if user is not None:
        u.write_text(user)
    if project is not None:
        p.write_text(project)
    return {"user_file": u, "project_file": p}


def test_layers_override_in_order_and_say_where_each_value_came_from(tmp_path: Path) -> None:
    files = _files(
        tmp_path,
        user='device = "cpu"\nseed = 3\n[budget]\niterations = 11\ntokens = 500\n',
        project="seed = 4\n[dropout]\nafter = 5\n",
    )
    env = {"KERNFORGE_BUDGET_ITERATIONS": "12", "KERNFORGE_DROPOUT_EVERY": "7"}
    s = resolve({"dropout.every": 9, "seed": None}, env=env, **files)
    assert s["device"] == "cpu" and s.sources["device"].startswith("user file")
    assert s["seed"] == 4 and s.sources["seed"].startswith("project file")
    assert s["budget.tokens"] == 500
    assert (
        s["budget.iterations"] == 12
        and s.sources["budget.iterations"] == "environment KERNFORGE_BUDGET_ITERATIONS"
    )
    assert s["dropout.after"] == 5
    assert s["dropout.every"] == 9 and s.sources["dropout.every"] == "flag --dropout.every"
    assert s["agent.candidates"] == 2 and s.sources["agent.candidates"] == "preset aka"
    assert s["judge.trials"] == 3 and s.sources["judge.trials"] == "default"


def test_llm_defaults_to_offline_without_a_key_and_says_so(tmp_path: Path) -> None:
    s = resolve({}, env=NO_KEYS, **_files(tmp_path))
    assert s["llm"] == "offline"
    assert "offline policy" in s.sources["llm"]
    keyed = resolve({}, env={"ANTHROPIC_API_KEY": "k"}, **_files(tmp_path / "keyed"))
    assert keyed["llm"].startswith("anthropic:")


def test_method_preset_sits_below_everything_the_user_sets(tmp_path: Path) -> None:
    s = resolve({"method": "offline", "agent.candidates": 3}, env=NO_KEYS, **_files(tmp_path))
    assert s["llm"] == "offline" and s.sources["llm"] == "preset offline"
    assert s["agent.candidates"] == 3


@pytest.mark.parametrize(
    ("toml", "needle"),
    [
        ("colour = 1\n", "unknown setting 'colour'"),
        ("[budget]\niterations = 'many'\n", "budget.iterations"),
        ('device = "tpu"\n', "expected one of auto, cuda, cpu"),
        ("seed = \n", "not valid TOML"),
    ],
)
def test_bad_files_are_errors_naming_file_and_key(tmp_path: Path, toml: str, needle: str) -> None:
    files = _files(tmp_path, project=toml)
    with pytest.raises(SettingsError, match="kernforge.toml") as info:
        resolve({}, env=NO_KEYS, **files)
    assert needle in str(info.value)


def test_bad_environment_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="KERNFORGE_AGENT_REFLECT"):
        resolve({}, env={"KERNFORGE_AGENT_REFLECT": "perhaps"}, **_files(tmp_path))


def test_budget_string_parses_and_rejects_unknown_items() -> None:
    assert parse_budget("iterations=4, tokens=1000,cost=0.5,wall=60,gpu=30") == {
        "budget.iterations": "4",
        "budget.tokens": "1000",
        "budget.cost": "0.5",
        "budget.wall": "60",
        "budget.gpu": "30",
    }
    with pytest.raises(SettingsError, match="bad item 'dollars=3'"):
        parse_budget("dollars=3")


def test_config_is_built_from_settings_and_round_trips_through_the_manifest(tmp_path: Path) -> None:
    s = resolve({"budget.cost": "1.5", "dropout.after": 2}, env=NO_KEYS, **_files(tmp_path))
    config = AgentConfig.from_settings("softmax_fp32", s)
    assert (
        config.max_cost_usd == 1.5
        and config.dropout_after == 2
        and config.budget.max_cost_usd == 1.5
    )
    assert AgentConfig.from_json(config.to_json()) == config


def test_show_config_prints_every_key_with_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.cli.main import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("KERNFORGE_JUDGE_TRIALS", "2")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / "kernforge.toml").write_text("[budget]\niterations = 5\n")
    result = CliRunner().invoke(
        app, ["run", "--show-config", "--seed", "7"], env={"COLUMNS": "250"}
    )
    assert result.exit_code == 0, result.output
    lines = {
        line.split("│")[1].strip(): line
        for line in result.output.splitlines()
        if line.count("│") >= 3
    }
    assert "project file" in lines["budget.iterations"] and " 5 " in lines["budget.iterations"]
    assert "environment KERNFORGE_JUDGE_TRIALS" in lines["judge.trials"]
    assert "flag --seed" in lines["seed"]
    assert "offline" in lines["llm"]
