"""`--set KEY=VALUE` is read by one parser (agents/cli/options.py) for `run` and `bench`: a
malformed item is one line on stderr naming the item and why, exit 2, and nothing is started."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents.cli.main import app
from agents.cli.options import parse_set
from agents.core.settings import SettingsError

NO_KEYS = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}
MALFORMED = [
    ("judge.trials", "--set 'judge.trials': expected KEY=VALUE"),
    ("=3", "--set '=3': expected KEY=VALUE, the key is empty"),
    (" =3", "--set ' =3': expected KEY=VALUE, the key is empty"),
    (
        "judge.trails=3",
        "--set 'judge.trails=3': unknown setting 'judge.trails'; did you mean 'judge.trials'?",
    ),
]


def test_parse_set_keeps_the_raw_values_and_the_last_of_a_key() -> None:
    items = ["judge.trials=3", " kb =off", "judge.trials=1", "agent.reflect=a=b"]
    assert parse_set(items) == {"judge.trials": "1", "kb": "off", "agent.reflect": "a=b"}
    assert parse_set(None) == {} and parse_set([]) == {}
    with pytest.raises(SettingsError, match="expected KEY=VALUE"):
        parse_set(["judge.trials=1", "kb"])


@pytest.mark.parametrize("command", ["run", "bench"])
@pytest.mark.parametrize(("item", "message"), MALFORMED)
def test_a_malformed_set_item_is_one_line_naming_it_and_exit_2(
    command: str, item: str, message: str, tmp_path: Path
) -> None:
    runs, bench = tmp_path / "runs", tmp_path / "bench"
    args = [command, "--set", "kb=off", "--set", item]
    if command == "run":
        args += ["--task", "softmax_fp32", "--runs-dir", str(runs)]
    else:
        args += ["--tasks", "softmax_fp32", "--llm", "offline", "--out", str(bench)]
    result = CliRunner().invoke(app, args, env=NO_KEYS)
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {message}\n"
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not runs.exists() and not bench.exists()  # refused before anything was started
