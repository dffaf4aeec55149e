"""One process at a time owns a run directory or a bench folder (agents/core/lock.py).

A second owner is refused with a message naming the first (pid, host, start, command) and the
CLI exits 2; a crashed owner (`kill -9`) never leaves its folder locked, not even when a child
process it started lives on. The end-to-end test races two resumes of a killed run: one runs
it, the other is refused, and the run ends with each attempt once (the bug this fixes: two
resumes both exited 0, one attempt ended in a hidden `.replaced` folder and another appeared
twice).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents import api
from agents.cli.main import app
from agents.core.lock import LOCK_FILE, FolderLocked, hold

ROOT = Path(__file__).resolve().parents[1]
FIXED = (ROOT / "tests" / "fixtures" / "agent" / "kernels" / "softmax_fixed.py").read_text()
NO_KEYS = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
# a process that owns `folder` for `seconds` (optionally with a child process that outlives it)
HOLDER = """
import subprocess, sys, time
from pathlib import Path
from agents.core.lock import hold
with hold(Path(sys.argv[1]), "run"):
    child = subprocess.Popen(["sleep", "60"]) if sys.argv[3] == "child" else None
    print("held", child.pid if child else "", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def holder(folder: Path, seconds: float = 60, child: bool = False) -> tuple[subprocess.Popen, str]:
    """A separate process owning `folder`; returns it once it owns it, and its child's pid."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder), str(seconds), "child" if child else "-"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline().split() if proc.stdout else []
    assert line[:1] == ["held"], f"the holder did not take the lock: {line}"
    return proc, (line[1] if len(line) > 1 else "")


def test_threads_racing_for_a_folder_one_owns_it_the_others_are_told_who(tmp_path: Path) -> None:
    barrier = threading.Barrier(6)
    won, refused = [], []

    def take() -> None:
        barrier.wait()
        try:
            with hold(tmp_path, "run"):
                won.append(threading.get_ident())
                time.sleep(0.5)  # the others try while it is held
        except FolderLocked as exc:
            refused.append(exc)

    threads = [threading.Thread(target=take) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and len(refused) == 5
    assert all(e.holder["pid"] == os.getpid() for e in refused)
    assert f"pid {os.getpid()} on " in str(refused[0]) and "\n" not in str(refused[0])
    # released: the next owner takes it at once, and the file names nobody
    with hold(tmp_path, "run"):
        pass
    assert (tmp_path / LOCK_FILE).read_text() == ""


def test_processes_racing_for_a_folder_one_owns_it(tmp_path: Path) -> None:
    code = (
        "import sys, time; from pathlib import Path; from agents.core.lock import hold, FolderLocked\n"
        "time.sleep(max(0.0, float(sys.argv[2]) - time.time()))\n"
        "try:\n"
        "    with hold(Path(sys.argv[1]), 'run'):\n"
        "        print('won'); sys.stdout.flush(); time.sleep(1.5)\n"
        "except FolderLocked as exc:\n"
        "    print(exc.holder['pid'])\n"
    )
    start_at = str(time.time() + 1.0)  # all four try at the same moment
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path), start_at],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    said = {p.pid: p.communicate(timeout=30)[0].strip() for p in procs}
    winners = [pid for pid, out in said.items() if out == "won"]
    assert len(winners) == 1, said
    assert all(out == str(winners[0]) for pid, out in said.items() if pid != winners[0]), said


def test_a_killed_owner_leaves_nothing_held_even_with_a_child_still_running(
    tmp_path: Path,
) -> None:
    proc, child = holder(tmp_path, child=True)
    try:
        with pytest.raises(FolderLocked) as refused:
            with hold(tmp_path, "run"):
                pass
        assert refused.value.holder["pid"] == proc.pid
        proc.kill()  # SIGKILL, the owner only: its child (a judge worker, say) lives on
        proc.wait(10)
        os.kill(int(child), 0)  # still running
        with hold(tmp_path, "run"):  # the kernel dropped the lock with its owner
            pass
    finally:
        os.kill(int(child), signal.SIGKILL)


def test_a_second_resume_is_refused_and_two_resumes_at_once_run_it_once(tmp_path: Path) -> None:
    """`kernforge run` owns its run while it waits for the model; `kernforge run --resume` of it
    exits 2 naming that process; after a `kill -9` of the owner, two resumes race: one finishes
    the run, the other is refused, and every attempt is on disk once."""
    from llm_servers import FakeLLMServer, openai_reply

    run_dir = tmp_path / "r"
    refused = threading.Event()
    reply = f"Here it is.\n\n```python\n{FIXED.rstrip()}\n```\n"
    with FakeLLMServer("openai") as server:
        for _ in range(10):
            server.answer(200, openai_reply(reply))
        server.hold_while(lambda: not refused.is_set())  # every model call waits until then
        llm = f"openai-compatible:{server.base_url}#m"
        owner = subprocess.Popen(
            [sys.executable, "-m", "agents.cli.main", "run", "--task", "softmax_fp32"]
            + ["--llm", llm, "--device", "cpu", "--candidates", "1", "--kb", "off"]
            + ["--set", "judge.trials=1", "--runs-dir", str(tmp_path), "--run-id", "r"],
            cwd=ROOT,
            env=NO_KEYS,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 120
            while not server.held:  # the owner is in its first model call
                assert owner.poll() is None, owner.stdout.read().decode() if owner.stdout else ""
                assert time.monotonic() < deadline, "the run never reached its model call"
                time.sleep(0.05)
            second = CliRunner().invoke(app, ["run", "--resume", str(run_dir)], env=NO_KEYS)
            assert second.exit_code == 2, second.output
            message = second.stderr.strip()
            assert len(message.splitlines()) == 1, message
            assert f"run {run_dir} is in use by pid {owner.pid} on " in message
            assert "kernforge run --task softmax_fp32" in message
            assert f"`kernforge run --resume {run_dir}`" in message
        finally:
            os.killpg(owner.pid, signal.SIGKILL)
            owner.wait(30)

        barrier = threading.Barrier(2)
        results: list[object] = []

        def resume() -> None:
            barrier.wait()
            try:
                results.append(api.resume(run_dir, quiet=True))
            except FolderLocked as exc:
                results.append(exc)
                refused.set()  # now the winner's model call is answered

        racers = [threading.Thread(target=resume) for _ in range(2)]
        for t in racers:
            t.start()
        for t in racers:
            t.join(180)
    finished = [r for r in results if isinstance(r, api.RunResult)]
    lost = [r for r in results if isinstance(r, FolderLocked)]
    assert len(finished) == 1 and len(lost) == 1, results
    assert finished[0].finished and finished[0].best_attempt == 1
    assert lost[0].holder["pid"] == os.getpid()
    assert sorted(p.name for p in (run_dir / "attempts").iterdir()) == ["1"]  # nothing hidden
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    judged = [e["id"] for e in events if e["event"] == "attempt"]
    assert judged == [1]
    assert [e["event"] for e in events].count("resume") == 1


def _bench(*args: str) -> object:
    env = {**NO_KEYS, "COLUMNS": "200"}
    return CliRunner().invoke(app, ["bench", *args], env=env)


def test_a_second_bench_on_a_folder_in_use_exits_2_naming_the_owner(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    proc, _ = holder(out)
    try:
        args = ["--tasks", "softmax_fp32", "--methods", "offline", "--llm", "offline"]
        result = _bench(*args, "--device", "cpu", "--out", str(out))
    finally:
        proc.kill()
        proc.wait(10)
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert message.startswith(f"error: bench folder {out} is in use by pid {proc.pid} on ")
    assert f"`kernforge bench --resume --out {out}`" in message and len(message.splitlines()) == 1
    assert not (out / "runs").exists()  # nothing was started


def test_a_bench_cell_whose_run_is_in_use_is_busy_and_exits_2(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    run_dir = out / "runs" / "softmax_fp32.offline.s0"
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text("{}")  # started before: the bench would resume it
    proc, _ = holder(run_dir)
    try:
        args = ["--tasks", "softmax_fp32", "--methods", "offline", "--llm", "offline"]
        result = _bench(*args, "--device", "cpu", "--out", str(out))
    finally:
        proc.kill()
        proc.wait(10)
    assert result.exit_code == 2, result.output
    assert f"busy: run {run_dir} is in use by pid {proc.pid} on " in result.stderr
    assert "1 run(s) owned by another process were not run" in result.stderr
    cells = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    assert [(c["run_id"], c["status"]) for c in cells if c["event"] == "cell"] == [
        ("softmax_fp32.offline.s0", "busy")
    ]
    assert json.loads((run_dir / "manifest.json").read_text()) == {}  # left as it was


def test_a_refused_process_does_not_name_a_dead_owner_left_in_the_file(tmp_path: Path) -> None:
    """A `kill -9`'d owner leaves its name in the file; the next owner locks and then writes its
    own. A process refused in between must wait for the new name, not report the dead one."""
    import socket

    from agents.core.lock import _read_holder

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait(30)
    path = tmp_path / LOCK_FILE
    path.write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(), "started": "x"}))
    alive = {"pid": os.getpid(), "host": socket.gethostname(), "started": "y"}
    writer = threading.Timer(0.3, lambda: path.write_text(json.dumps(alive)))
    writer.start()
    try:
        assert _read_holder(path)["pid"] == os.getpid()
    finally:
        writer.join()
    other_host = {"pid": dead.pid, "host": "elsewhere", "started": "z"}
    path.write_text(json.dumps(other_host))  # a pid of another host cannot be checked: named
    assert _read_holder(path) == other_host
