"""`kernforge run` killed with SIGKILL after its first attempt, then `kernforge run --resume`:
the run completes and no completed attempt is lost or rewritten."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from agents import api

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "fixtures" / "agent" / "repair_softmax.jsonl"
FIXED = (ROOT / "tests" / "fixtures" / "agent" / "kernels" / "softmax_fixed.py").read_text()


def kernforge(*args: str) -> list[str]:
    return [sys.executable, "-m", "agents.cli.main", *args]


def test_kill_9_after_the_first_attempt_then_resume_completes(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    run_dir = tmp_path / "killed"
    proc = subprocess.Popen(
        kernforge(
            "run",
            "--task",
            "softmax_fp32",
            "--llm",
            f"replay:{SCRIPT}",
            "--device",
            "cpu",
            "--candidates",
            "1",
            "--kb",
            "off",
            "--runs-dir",
            str(tmp_path),
            "--run-id",
            "killed",
            "--set",
            "judge.trials=1",
        ),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    first = run_dir / "attempts" / "1" / "verdict.json"
    deadline = time.monotonic() + 240
    while not first.is_file():
        assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
        assert time.monotonic() < deadline, "the first attempt never appeared"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    before = {p.name: p.read_bytes() for p in (run_dir / "attempts" / "1").iterdir()}

    done = subprocess.run(
        kernforge("run", "--resume", "killed", "--runs-dir", str(tmp_path)),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "best kernel" in done.stdout and str(
        run_dir / "best" / "kernel.py"
    ) in done.stdout.replace("\n", "")

    after = {p.name: p.read_bytes() for p in (run_dir / "attempts" / "1").iterdir()}
    assert {k: after[k] for k in before} == before  # the completed attempt survived byte for byte
    assert sorted(p.name for p in (run_dir / "attempts").iterdir()) == ["1", "2"]
    assert (run_dir / "best" / "kernel.py").read_text() == FIXED
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    kinds = [e["event"] for e in events]
    assert "resume" in kinds and kinds[-1] == "finish"
    # each attempt judged once; if the kill landed before the evaluator's checkpoint, attempt 1 is
    # taken back from disk on resume rather than judged again (and the kill may also have landed
    # between its folder being written and its "attempt" event being logged)
    judged = [e["id"] for e in events if e["event"] == "attempt"]
    recovered = [e["id"] for e in events if e["event"] == "attempt_recovered"]
    assert len(judged) == len(set(judged))
    assert recovered in ([], [1])
    assert sorted(set(judged) | set(recovered)) == [1, 2] and 2 in judged
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["best_attempt"] == 2 and summary["pairs"] == 1 and summary["finished"]

    again = api.resume("killed", runs_dir=tmp_path, quiet=True)  # a finished run stays finished
    assert again.finished and again.best_attempt == 2


def test_a_kill_between_a_steps_writes_and_its_checkpoint_is_resumed(tmp_path: Path) -> None:
    """LangGraph saves a step's writes before the checkpoint that follows it; a kill in between
    leaves a checkpoint with nothing "next" although the run has not finished. Resume must apply
    those writes and go on, not report the run as finished (seen on a killed bench, where the
    resumed run then stopped with "the run did not finish")."""
    import sqlite3

    first = api.run(
        "softmax_fp32",
        llm="offline",
        device="cpu",
        runs_dir=tmp_path,
        settings={"kb": "off", "judge.trials": 1, "offline.codegen": False},
        run_id="cut",
        quiet=True,
    )
    assert first.finished
    # drop the last two checkpoints (after the finish node, and after the step before it): the
    # latest left is the one that step ran from, and its writes are still stored
    with sqlite3.connect(first.run_dir / "checkpoint.sqlite") as db:
        newest = [
            row[0]
            for row in db.execute(
                "SELECT checkpoint_id FROM checkpoints ORDER BY checkpoint_id DESC LIMIT 3"
            )
        ]
        assert (
            db.execute(
                "SELECT count(*) FROM writes WHERE checkpoint_id = ?", (newest[2],)
            ).fetchone()[0]
            > 0
        )
        db.executemany(
            "DELETE FROM checkpoints WHERE checkpoint_id = ?", [(c,) for c in newest[:2]]
        )
    resumed = api.resume("cut", runs_dir=tmp_path, quiet=True)
    assert resumed.finished and resumed.best_attempt == 1, resumed.reason
    events = [
        json.loads(line) for line in (first.run_dir / "events.jsonl").read_text().splitlines()
    ]
    (note,) = [e for e in events if e["event"] == "resume"]
    assert note["checkpoint_next"] == []  # the state the old code took for "already finished"
