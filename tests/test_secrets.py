"""Secrets stay out: no configured key reaches a candidate's or a trusted worker's environment, a
verdict, a prompt or any file of a run (benchmarks/redaction.py, agents/core/redact.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agents import api
from agents.core.redact import register_secret, run_secrets, scrub
from agents.core.rundir import RunDir
from agents.core.state import Attempt, VerdictSummary
from benchmarks import redact, secret_values, without_secrets
from benchmarks.harness.child import Child
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import get_task

ROOT = Path(__file__).resolve().parents[1]
KEY = "sk-test-kf-planted-0123456789abcdefABCDEF"
TOKEN = "kf-planted-foo-token-9876543210"
SOLUTION = (ROOT / "knowledge_base" / "kernels" / "softmax.py").read_text()
# the reference solution, then a raise that carries both secrets into the verdict message
LEAKING = SOLUTION.replace("\ndef softmax(", "\ndef _real_softmax(") + (
    "\n\ndef softmax(x):\n    _real_softmax(x)\n"
    f'    raise RuntimeError("key {KEY} token {TOKEN}")\n'
)


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("FOO_TOKEN", TOKEN)


def _files_holding(root: Path, *needles: str) -> list[str]:
    hits = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            hits += [f"{path} holds {n[:12]}..." for n in needles if n.encode() in data]
    return hits


def test_secret_values_follow_the_name_rule() -> None:
    env = {
        "OPENAI_API_KEY": KEY,
        "FOO_TOKEN": TOKEN,
        "DB_PASSWORD": "hunter2hunter2",
        "X_SECRET": "short",  # under 8 characters: too likely to be ordinary text
        "PATH": "/usr/bin:/bin",
        "KEYBOARD": "a-value-long-enough",
    }
    assert secret_values(env) == {
        "OPENAI_API_KEY": KEY,
        "FOO_TOKEN": TOKEN,
        "DB_PASSWORD": "hunter2hunter2",
    }
    assert set(without_secrets(env)) == {"PATH", "KEYBOARD"}


def test_redact_replaces_every_occurrence_and_cut_off_pieces() -> None:
    secrets = {"OPENAI_API_KEY": KEY, "FOO_TOKEN": TOKEN}
    text = f"a {KEY} b {TOKEN} c {KEY}"
    assert redact(text, secrets) == (
        "a [redacted OPENAI_API_KEY] b [redacted FOO_TOKEN] c [redacted OPENAI_API_KEY]"
    )
    # a message cut through the key (the worker truncates long messages) leaves no piece behind
    cut = f"error: {KEY[:20]}"
    assert redact(cut, secrets) == "error: [redacted OPENAI_API_KEY]"
    tail = f"{KEY[-15:]} at the start of a tail"
    assert redact(tail, secrets) == "[redacted OPENAI_API_KEY] at the start of a tail"
    assert redact("nothing here", secrets) == "nothing here"


def test_a_configured_provider_key_is_a_secret_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KF_TEST_CONFIGURED_KEY", raising=False)
    register_secret("anthropic api_key", "configured-key-not-in-env-42")
    assert run_secrets()["anthropic api_key"] == "configured-key-not-in-env-42"
    assert scrub("x configured-key-not-in-env-42 y") == "x [redacted anthropic api_key] y"


def test_trusted_workers_get_no_keys(planted: None, tmp_path: Path) -> None:
    """Baseline workers run the task's own reference unisolated; their environment still holds
    no key or token (candidates' workers get the sandbox's allow-list)."""
    folder = tmp_path / "trusted"
    folder.mkdir()
    child = Child(folder, "cpu", isolate=False)
    try:
        environ = Path(f"/proc/{child.proc.pid}/environ")
        deadline = time.monotonic() + 10
        while not environ.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.05)
        data = environ.read_bytes()
        assert b"TRITON_INTERPRET=1" in data  # it is the worker's environment
        assert KEY.encode() not in data and TOKEN.encode() not in data
        assert b"OPENAI_API_KEY" not in data and b"FOO_TOKEN" not in data
    finally:
        child.kill()


def test_the_judge_redacts_a_key_from_its_verdict(planted: None, tmp_path: Path) -> None:
    task = get_task("softmax_fp32")
    config = JudgeConfig(
        device="cpu",
        trials=1,
        modes=("standard",),
        shapes=(task.shapes_for("cpu")[0].name,),
        prewarm=False,
        perf=False,
        trusted=True,  # a project-written file: runs also where no OS isolation exists
        work_root=tmp_path / "work",
    )
    verdict = evaluate(task, "leaking.py", config, source=LEAKING)
    assert verdict.error_class.value == "runtime_error", verdict.message
    assert "[redacted OPENAI_API_KEY]" in verdict.message
    assert "[redacted FOO_TOKEN]" in verdict.message
    text = verdict.model_dump_json()
    assert KEY not in text and TOKEN not in text


def test_run_files_are_scrubbed_as_they_are_written(planted: None, tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "r")
    run.event("note", text=f"saw {KEY}", nested={"t": [TOKEN]})
    attempt = Attempt(
        id=1,
        node="generator",
        mode="generate",
        iteration=0,
        slot=0,
        key="k",
        code_path="attempts/1/code.py",
        code_sha256="0" * 64,
        verdict=VerdictSummary(passed=False, error_class="runtime_error", message=KEY),
    )
    run.write_attempt(attempt, f"# {KEY}\n", json.dumps({"message": TOKEN}), KEY, TOKEN)
    run.append_pair({"failing": {"id": 1}, "fixing": {"id": 2}, "diff": KEY})
    run.write_manifest({"config": {"note": TOKEN}})
    run.write_best(f"# {KEY}", {"why": TOKEN})
    run.write_model_test(f"# {KEY}", TOKEN, KEY)
    assert _files_holding(run.path, KEY, TOKEN) == []
    assert "[redacted OPENAI_API_KEY]" in (run.attempt_dir(1) / "prompt.md").read_text()


def test_an_agent_run_writes_no_key_anywhere(planted: None, tmp_path: Path) -> None:
    """A replayed model reply whose kernel raises the literal key and token: the verdict, the
    repair prompt, events, attempts, pairs and the checkpoint hold neither."""
    script = tmp_path / "script.jsonl"
    leaking = {"node": "generator", "text": f"```python\n{LEAKING}```"}
    fixed = {"text": f"The raise is gone.\n\n```python\n{SOLUTION}```"}  # any later call
    script.write_text("\n".join(json.dumps(e) for e in [leaking] + [fixed] * 6) + "\n")
    result = api.run(
        "softmax_fp32",
        llm=f"replay:{script}",
        device="cpu",
        runs_dir=tmp_path / "runs",
        budget="iterations=2",
        settings={"kb": "off", "judge.trials": 1, "agent.candidates": 1},
        run_id="secrets",
        quiet=True,
    )
    run = result.run_dir
    assert (run / "attempts" / "1" / "verdict.json").is_file()
    assert _files_holding(run, KEY, TOKEN) == []
    written = "".join(p.read_text(errors="replace") for p in run.rglob("*") if p.is_file())
    assert "[redacted OPENAI_API_KEY]" in written  # the key was there, and was replaced


def test_a_configured_key_does_not_hide_the_environments_key_of_the_same_name(
    planted: None,
) -> None:
    from agents.core.redact import register_secret, scrub

    register_secret("OPENAI_API_KEY", "sk-configured-elsewhere-0001")
    text = scrub(f"{KEY} and sk-configured-elsewhere-0001")
    assert KEY not in text and "sk-configured-elsewhere-0001" not in text
