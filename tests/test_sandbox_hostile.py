"""Hostile candidates against the OS layer (benchmarks/harness/sandbox.py), CPU interpreter.

Each case names the side effect that must not happen. The static check refuses every one of them
(they import os or socket, walk `__globals__` in a format string, or reach pathlib through a name
Triton re-exports: tests/test_hostile_static.py pins that), so each is run past it, straight in a
sandboxed worker: the OS layer must hold on its own. The last test goes through the whole judge.
Every test here needs bubblewrap and skips, saying why, where it cannot run."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import threading
import time
from pathlib import Path

import forked
import pytest
from hostile_manifest import HOSTILE_DIR, parse_header

from benchmarks.harness import child as child_module
from benchmarks.harness import forkserver, sandbox
from benchmarks.harness.child import Child, send_inputs
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.harness.messages import CandidateJob, CandidateResult, ShapeSpec
from benchmarks.loading import TASKS_DIR, get_task

pytestmark = pytest.mark.skipif(
    sandbox.level() != sandbox.BWRAP, reason=f"no OS isolation here: {sandbox.detect().reason}"
)

KEY = "sk-test-kf-planted-0123456789abcdef"
SSH = "KF-PLANTED-SSH-PRIVATE-KEY"
NETRC = "machine example.com login kf password KF-PLANTED-NETRC"


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Secrets in the judge's environment and in a home folder of its own (HOME points there)."""
    home = tmp_path / "kf-planted-home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(SSH)
    (home / ".netrc").write_text(NETRC)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("HF_TOKEN", KEY)
    monkeypatch.setenv("HOME", str(home))
    return home


def _files_contain(root: Path, needle: str) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file() and needle.encode() in path.read_bytes():
            hits.append(str(path))
    return hits


def _raised(result: CandidateResult | None, what: str) -> str:
    """The message the candidate raised (these payloads report what they saw by raising)."""
    assert result is not None and result.status == "error", result
    assert result.error_class == "runtime_error", result
    assert what in result.message, result.message
    return result.message + result.traceback


FORKED = pytest.mark.parametrize(
    "forked",
    [
        False,
        pytest.param(
            True, marks=pytest.mark.skipif(not forkserver.enabled("cpu"), reason="no fork server")
        ),
    ],
    ids=["fresh", "forked"],
)


@FORKED
def test_environment_key_stays_out_of_the_worker(
    planted: Path, tmp_path: Path, forked: bool
) -> None:
    child, result = _run_unchecked("os_env_key_format", tmp_path / "w", forked)
    folder = child.folder
    text = _raised(result, "leaked environment")  # the read worked: it saw a scrubbed one
    assert "TRITON_INTERPRET" in text
    assert KEY not in text
    assert str(planted) not in text  # nor the user's HOME
    assert _files_contain(folder, KEY) == []


def _cmdline_as_reported(pid: int) -> str:
    """`pid`'s /proc cmdline as the payload reports one it could read: its first 4000 bytes,
    decoded, inside a repr (arguments joined by an escaped NUL). The whole line, not one
    argument: under pytest-xdist the judge's argv[0] is "-c", a string any bwrap command line
    contains (`--cap-drop`)."""
    raw = Path(f"/proc/{pid}/cmdline").read_bytes()[:4000].decode(errors="replace")
    return "\\x00".join(repr(arg)[1:-1] for arg in raw.split("\0"))


@FORKED
def test_secrets_and_other_processes_are_unreadable(
    planted: Path, tmp_path: Path, forked: bool
) -> None:
    child, result = _run_unchecked("os_read_secrets_path", tmp_path / "w", forked)
    folder = child.folder
    text = _raised(result, "pids seen")
    judge_cmdline = _cmdline_as_reported(os.getpid())  # what no worker may see
    assert len(judge_cmdline) > 20 and "x00" in judge_cmdline
    for secret in (KEY, SSH, "KF-PLANTED-NETRC", judge_cmdline):
        assert secret not in text, secret
        assert _files_contain(folder, secret) == [], secret
    raw_cmdline = Path(f"/proc/{os.getpid()}/cmdline").read_bytes().decode(errors="replace")
    assert _files_contain(folder, raw_cmdline) == []
    assert result is not None
    seen = result.message.split("pids seen")[1].split("]")[0]
    pids = [int(p) for p in re.findall(r"\d+", seen)]
    # its own pid namespace: bwrap's init and itself (forked: the server, the intermediate fork,
    # the worker's init and itself)
    assert os.getpid() not in pids and len(pids) <= 4


@FORKED
def test_files_outside_the_sandboxs_view_are_not_there(tmp_path: Path, forked: bool) -> None:
    """A file beside the project, readable only by its owner (the judge's user: root reads any
    file), and /etc/shadow: the sandbox shows the system's folders and the worker's own, not the
    host's other folders, and hides /etc's entries others may not read."""
    # beside the project, or at the top of the filesystem where the project sits in a masked
    # folder (a clone under /tmp): the candidate looks in both
    places = [sandbox.REPO_ROOT.parent, Path("/")]
    usable = [
        p
        for p in places
        if os.access(p, os.W_OK)
        and not any(p == m or m in p.parents for m in sandbox.masked_dirs())
    ]
    if not usable:
        pytest.skip(f"cannot plant a file outside the sandbox's view here ({places})")
    beside = usable[0]
    secret = f"KF-PLANTED-OUTSIDE-{os.getpid()}-{time.monotonic_ns()}"
    planted = beside / f"kf-planted-outside-{os.getpid()}"
    planted.write_text(secret)
    planted.chmod(0o600)
    try:
        child, result = _run_unchecked("os_read_outside_view", tmp_path / "w", forked)
        text = _raised(result, "beside the project")
        assert secret not in text and planted.name not in text, text
        assert _files_contain(child.folder, secret) == []
        top = text.split("top level ")[1].split("]")[0]
        for host_only in ("srv", "mnt", "media"):  # never the system's nor the worker's
            assert f"'{host_only}'" not in top, top
        if Path("/etc/shadow").exists():
            assert "/etc/shadow: 0 bytes" in text or "/etc/shadow: Permission denied" in text, text
    finally:
        planted.unlink(missing_ok=True)


@FORKED
def test_project_tree_task_file_home_and_run_folder_are_unwritable(
    planted: Path, tmp_path: Path, forked: bool
) -> None:
    task_file = get_task("softmax_fp32").path
    before = hashlib.sha256(task_file.read_bytes()).hexdigest()
    import torch

    targets = [
        TASKS_DIR,
        sandbox.REPO_ROOT,
        Path(torch.__file__).parent,
        tmp_path,  # the parent of the worker's folder (the judge's work folder in a real run)
        planted,
        Path("/root"),
    ]
    leftovers = [
        t / "kf_hostile_marker.txt" for t in targets if (t / "kf_hostile_marker.txt").exists()
    ]
    assert leftovers == [], "markers from an earlier run: remove them first"
    try:
        child, result = _run_unchecked("os_write_tree_path", tmp_path / "w", forked)
        text = _raised(result, "refused")  # it tried
        targets.append(child.folder.parent)  # forked: the server's folder
        written = [t for t in targets if (t / "kf_hostile_marker.txt").exists()]
        assert written == [], text
        assert hashlib.sha256(task_file.read_bytes()).hexdigest() == before
    finally:
        for t in targets:
            (t / "kf_hostile_marker.txt").unlink(missing_ok=True)


# ---------------------------------------------------------------------------------------------
# past the static check: the payload straight in a sandboxed worker
# ---------------------------------------------------------------------------------------------


def _run_unchecked(
    name: str, folder: Path, forked: bool = False
) -> tuple[Child, CandidateResult | None]:
    """Run tests/hostile/<name>.py in a sandboxed worker with no static check (a test-only path:
    nothing in the product skips the check) and wait for the worker to exit by itself. `forked`:
    the worker is forked from a fork server whose folder sits beside `folder` (its own folder is
    then inside the server's)."""
    case = parse_header(HOSTILE_DIR / f"{name}.py")
    task = get_task(case.task)
    if forked:
        server = forkserver.take("cpu", folder.parent, child_module._SPAWNER.run, prewarm=False)
        folder = server.folder / folder.name
        folder.mkdir()
        child = Child(folder, "cpu", isolate=True, server=server)
    else:
        folder.mkdir()
        child = Child(folder, "cpu", isolate=True)
    assert child.isolation == sandbox.BWRAP
    shutil.copyfile(case.path, folder / "candidate.py")
    shape = task.shapes_for("cpu")[0]
    child.submit(
        CandidateJob(
            task_path=child.stage(task.path),
            dtype=task.dtype,
            candidate_path=str(folder / "candidate.py"),
            device="cpu",
            shapes=[ShapeSpec(name=shape.name, dims=dict(shape.dims))],
            modes=["standard"],
            trials=1,
            seed=None,
            perf=False,
        )
    )
    send_inputs(child.folder, 0)
    try:
        assert _wait_taking_trials(child, 180), "the worker did not finish"
        return child, child.result(CandidateResult)
    finally:
        child.kill()


def _wait_taking_trials(child: Child, seconds: float) -> bool:
    """Wait for the worker to exit, taking each trial's files as the judge does (the worker
    runs nothing of the candidate's again until they are taken)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for path in child.folder.glob("trial_*.json"):
            for taken in (path, path.with_suffix(".bin")):
                taken.unlink(missing_ok=True)
        if child.wait(0.05) is not None:
            return True
    return False


def _processes_in(folder: Path) -> list[int]:
    """Host pids of processes whose working directory is `folder` (a candidate's descendants)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if Path(os.readlink(entry / "cwd")) == folder:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _settled(folder: Path, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := _processes_in(folder)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def test_loopback_server_on_the_host_is_unreachable(tmp_path: Path) -> None:
    port = int(
        re.search(r"^PORT = (\d+)", (HOSTILE_DIR / "os_loopback_socket.py").read_text(), re.M)[1]
    )
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        server.bind(("127.0.0.1", port))
    except OSError as exc:
        pytest.skip(f"port {port} is busy here: {exc}")
    server.listen(4)
    server.settimeout(0.5)
    got: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                got.append(conn.recv(100) or b"connected")

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:  # the server works
            s.sendall(b"control")
        deadline = time.monotonic() + 5
        while not got and time.monotonic() < deadline:
            time.sleep(0.05)
        assert got == [b"control"]
        _, result = _run_unchecked("os_loopback_socket", tmp_path / "w")
        assert result is not None and result.status == "ok", result
        time.sleep(1)
        assert got == [b"control"], "the candidate reached the host's loopback"
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()


def test_a_forking_candidate_is_refused_and_leaves_no_process(tmp_path: Path) -> None:
    """Since 2026-12-07 the probes refuse starting a process once installed: the forks and the
    setsid daemon never start (the namespace teardown they used to test is tested directly
    below)."""
    for name in ("os_fork_many", "os_setsid_daemon"):
        folder = tmp_path / name
        _, result = _run_unchecked(name, folder)
        assert result is not None and result.error_class == "trace_evaded", result
        assert "a process was started" in result.message, result.message
        assert _settled(folder.resolve(), 1) == []
        time.sleep(0.5)
        assert not (folder / "late.txt").exists()


FORKER = """
import os, sys, time
for _ in range(5):  # sleepers
    if os.fork() == 0:
        time.sleep(60)
        os._exit(0)
if os.fork() == 0:  # a daemon in a session of its own that writes late
    os.setsid()
    if os.fork() == 0:
        time.sleep(3)
        open("late.txt", "w").write("outlived")
        os._exit(0)
    os._exit(0)
time.sleep(0.5)
"""


def test_processes_started_in_the_sandbox_die_with_its_first_process(tmp_path: Path) -> None:
    """The pid namespace ends with the sandbox's first process: sleepers forked there and a
    setsid daemon die with it (what protects the judge from the processes Triton's tools start,
    and from any process start the probes miss)."""
    import subprocess
    import sys

    folder = (tmp_path / "w").resolve()
    folder.mkdir()
    launch = sandbox.candidate_launch(folder, "cpu", [sys.executable, "-c", FORKER])
    done = subprocess.run(
        launch.argv, env=launch.env, cwd=folder, preexec_fn=launch.preexec_fn, timeout=120
    )
    assert done.returncode == 0
    assert _settled(folder, 5) == []
    time.sleep(4)  # past the daemon's 3 s
    assert not (folder / "late.txt").exists()


@FORKED
def test_the_judge_cannot_be_killed_from_inside(tmp_path: Path, forked: bool) -> None:
    child, result = _run_unchecked("os_kill_judge", tmp_path / "w", forked)
    assert result is not None and result.status == "ok", result  # we are alive to read it
    proc = child._server.proc if forked else child.proc  # type: ignore[union-attr]
    assert str(os.getpid()) not in proc.args  # the judge's pid is not on its command line


def test_the_judge_survives_its_sandbox_and_the_next_evaluation_passes(tmp_path: Path) -> None:
    _run_unchecked("os_kill_judge", tmp_path / "w1")
    task = get_task("softmax_fp32")
    verdict = evaluate(
        task,
        HOSTILE_DIR / "good_softmax.py",
        JudgeConfig(device="cpu", trials=1, prewarm=False, work_root=tmp_path / "work"),
    )
    assert verdict.passed, verdict.message
    assert verdict.isolation == sandbox.BWRAP
    assert forked.evaluation_folders(tmp_path / "work") == []  # its folder is gone
