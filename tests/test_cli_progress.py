"""Live progress: a line on stderr as each slow step starts (retrieval, a judge call, a
knowledge-base build, a bench cell), stdout left for results and `--json`; `--quiet` quiet."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from agents.cli.main import app
from agents.core.progress import Progress

ROOT = Path(__file__).resolve().parents[1]
TORCH = (ROOT / "tests" / "fixtures" / "agent" / "kernels" / "softmax_torch.py").read_text()
NO_KEYS = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}
DEAD_KB = {"KERNFORGE_KB_URL": "http://127.0.0.1:9"}  # refused at once: the run goes on without


def replay_script(path: Path, code: str, n: int = 8) -> str:
    reply = json.dumps({"text": f"Here it is.\n\n```python\n{code.rstrip()}\n```\n"})
    path.write_text((reply + "\n") * n)
    return f"replay:{path}"


def test_progress_steps_go_to_their_own_console_and_quiet_silences_them() -> None:
    out, steps = io.StringIO(), io.StringIO()
    progress = Progress(Console(file=out), steps=Console(file=steps, width=40))
    progress.step("judge: attempt 3 (repair/fix) on cpu " + "x" * 60)
    assert out.getvalue() == ""
    assert steps.getvalue() == "judge: attempt 3 (repair/fix) on cpu " + "x" * 60 + "\n"
    quiet = Progress(Console(file=out), quiet=True, steps=Console(file=steps))
    quiet.step("retrieve: searching")
    assert "retrieve" not in steps.getvalue()


def test_a_bench_cell_prints_its_start_retrieval_and_judge_lines_on_stderr(
    tmp_path: Path,
) -> None:
    """One cell (a static-check refusal: no judge child process), --verbose for the run's own
    steps, --json so stdout holds only the document."""
    llm = replay_script(tmp_path / "torch.jsonl", TORCH)
    args = ["bench", "--tasks", "softmax_fp32", "--methods", "single-shot", "--llm", llm]
    args += ["--budget", "iterations=1", "--device", "cpu", "--set", "judge.trials=1"]
    args += ["--set", "kb=auto"]  # the preset has it off; the dead server is refused at once
    result = CliRunner().invoke(
        app,
        [*args, "--out", str(tmp_path / "bench"), "--verbose", "--json"],
        env={**NO_KEYS, **DEAD_KB},
    )
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert [c["run_id"] for c in record["cells"]] == ["softmax_fp32.single-shot.s0"]
    assert record["summary"][0]["runs"] == 1
    err = result.stderr.splitlines()
    assert "bench: start 1/1: softmax_fp32 · single-shot · seed 0" in err
    assert (
        "retrieve: searching the knowledge base for softmax_fp32 (its own solution hidden)" in err
    )
    assert any(line.startswith("judge: attempt 1 (") and line.endswith(" on cpu") for line in err)
    start, judge = (
        err.index("bench: start 1/1: softmax_fp32 · single-shot · seed 0"),
        next(i for i, line in enumerate(err) if line.startswith("judge: attempt 1")),
    )
    assert start < judge

    quiet = CliRunner().invoke(
        app, [*args, "--out", str(tmp_path / "quiet"), "--quiet"], env={**NO_KEYS, **DEAD_KB}
    )
    assert quiet.exit_code == 0, quiet.output
    assert "bench: start" not in quiet.stderr and "judge: attempt" not in quiet.stderr
    assert "retrieve: searching" not in quiet.stderr


def test_eval_says_what_it_judges_before_the_verdict(tmp_path: Path) -> None:
    candidate = tmp_path / "softmax_torch.py"
    candidate.write_text(TORCH)
    result = CliRunner().invoke(
        app,
        ["eval", "--task", "softmax_fp32", "--candidate", str(candidate), "--device", "cpu"],
        env=NO_KEYS,
    )
    assert result.exit_code == 1, result.output  # torch.softmax: refused by the static check
    assert result.stderr.startswith(f"judge: {candidate} on task softmax_fp32 (device cpu")
    assert "FAIL" in result.stdout


class CountingEmbedding:
    """Stands in for all-MiniLM-L6-v2: fixed small vectors, no model to load."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls += len(texts)
        return [[float(len(t) % 7) + 1.0, 1.0, float(i % 3)] for i, t in enumerate(texts)]


def test_a_first_kb_search_says_it_builds_the_knowledge_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from knowledge_base.embedding import MiniLMEmbedding

    fake = CountingEmbedding()
    monkeypatch.setattr(MiniLMEmbedding, "__call__", lambda self, input: fake(list(input)))
    env = {**NO_KEYS, "KERNFORGE_KB_DIR": str(tmp_path / "kb"), "KERNFORGE_KB_URL": ""}
    result = CliRunner().invoke(
        app, ["kb", "search", "online softmax", "--k", "2", "--json"], env=env
    )
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)) == 2  # stdout: the JSON document only
    err = result.stderr.splitlines()
    assert err[0] == "knowledge base empty: building it (first use; reused after)"
    assert err[1].endswith(": reading the corpus")
    embedding = next(line for line in err if ": embedding " in line)
    chunks = int(embedding.split(": embedding ")[1].split()[0])
    assert chunks == fake.calls - 1 > 0  # every chunk once, then the query
    assert err[-1].startswith(f"knowledge base: {chunks}/{chunks} chunks embedded (")

    again = CliRunner().invoke(app, ["kb", "search", "online softmax", "--json"], env=env)
    assert again.exit_code == 0 and again.stderr == ""  # built: nothing to say
    quiet = CliRunner().invoke(app, ["kb", "build", "--force", "--quiet"], env=env)
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.output
