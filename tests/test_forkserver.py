"""The fork server (benchmarks/harness/forkserver.py): isolated CPU workers forked from one warm,
sandboxed process. Each evaluation must be as isolated as one in a freshly started sandbox: no
capabilities, nothing of the evaluation before it in reach, no other process's memory or
environment readable; and a server that dies is replaced. Needs bubblewrap (skips otherwise)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import forked
import pytest
from hostile_manifest import HOSTILE_DIR, parse_header

from benchmarks.harness import forkserver, sandbox
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.harness.static_check import StaticResult
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass

pytestmark = pytest.mark.skipif(
    not forkserver.enabled("cpu"),
    reason=f"no fork server here (isolation: {sandbox.describe()})",
)


def _servers(root: Path) -> list[forkserver.ForkServer]:
    return [s for pool in forkserver._SERVERS.values() for s in pool if s.folder.parent == root]


def _config(work: Path) -> JudgeConfig:
    return JudgeConfig(device="cpu", trials=1, prewarm=False, work_root=work)


def test_evaluations_on_one_server_leave_nothing_for_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = parse_header(HOSTILE_DIR / "os_fork_server_leftovers.py")
    monkeypatch.setattr(  # as if it had found a hole in the static check
        "benchmarks.harness.judge.check_source",
        lambda *a, **k: StaticResult(ok=True, error_class=ErrorClass.NONE, message=""),
    )
    work = (tmp_path / "work").resolve()
    for _ in range(2):
        verdict = evaluate(get_task(case.task), case.path, _config(work))
        assert verdict.error_class == case.unchecked, verdict.message
        assert verdict.passed and verdict.isolation == sandbox.BWRAP
    servers = _servers(work)
    assert len(servers) == 1 and servers[0].jobs == 2  # the second evaluation was forked too
    assert forked.evaluation_folders(work) == []
    assert not list(Path("/tmp").glob("kf_fork_leftover*"))
    assert not list(Path("/dev/shm").glob("kf_fork_leftover*"))


def test_a_forked_worker_reaches_no_other_process_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = parse_header(HOSTILE_DIR / "os_fork_server_fds.py")
    monkeypatch.setattr(  # as if it had found a hole in the static check
        "benchmarks.harness.judge.check_source",
        lambda *a, **k: StaticResult(ok=True, error_class=ErrorClass.NONE, message=""),
    )
    work = (tmp_path / "work").resolve()
    for _ in range(2):  # the second one is forked from a server that has served one already
        verdict = evaluate(get_task(case.task), case.path, _config(work))
        assert verdict.error_class == case.unchecked, verdict.message
        assert verdict.passed and verdict.isolation == sandbox.BWRAP
    servers = _servers(work)
    assert len(servers) == 1 and servers[0].jobs == 2
    assert not list(work.rglob("kf_fork_fd_probe*"))
    assert not list(Path("/tmp").glob("kf_fork_fd_probe*"))


def test_a_server_that_dies_is_replaced(tmp_path: Path) -> None:
    work = (tmp_path / "work").resolve()
    good = HOSTILE_DIR / "good_softmax.py"
    task = get_task("softmax_fp32")
    assert evaluate(task, good, _config(work)).passed
    (first,) = _servers(work)
    assert first.pid is not None
    os.kill(first.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while first.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    verdict = evaluate(task, good, _config(work))
    assert verdict.passed, verdict.message
    assert [s for s in _servers(work) if s is not first and s.jobs == 1]
    assert first not in _servers(work)


def test_the_environment_variable_turns_it_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(forkserver.ENV, "0")
    work = (tmp_path / "work").resolve()
    verdict = evaluate(get_task("softmax_fp32"), HOSTILE_DIR / "good_softmax.py", _config(work))
    assert verdict.passed and verdict.isolation == sandbox.BWRAP
    assert _servers(work) == []


def test_where_nested_namespaces_are_refused_fresh_workers_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    from benchmarks.harness import child

    real = sandbox.bwrap_prefix

    def no_nesting(*args: object, **kwargs: object) -> list[str]:
        argv = real(*args, **kwargs)  # type: ignore[arg-type]
        assert argv[1] == "--unshare-all"
        return [*argv[:2], "--unshare-user", "--disable-userns", *argv[2:]]  # bubblewrap >= 0.8

    monkeypatch.setattr(sandbox, "bwrap_prefix", no_nesting)
    monkeypatch.setattr(child, "_FORK_FAILED", set())
    work = (tmp_path / "work").resolve()
    verdict = evaluate(get_task("softmax_fp32"), HOSTILE_DIR / "good_softmax.py", _config(work))
    assert "no fork server" in capfd.readouterr().err
    assert child._FORK_FAILED == {"cpu"}
    assert verdict.passed and verdict.isolation == sandbox.BWRAP, verdict.message
    assert _servers(work) == []


def test_one_judge_at_a_time_keeps_one_server_and_side_by_side_gets_a_spare(tmp_path: Path) -> None:
    from benchmarks.harness import child

    root = (tmp_path / "pool").resolve()
    root.mkdir()
    first = forkserver.take("cpu", root, child._SPAWNER.run, prewarm=True)
    assert len(_servers(root)) == 1  # nothing ran beside it: no spare
    second = forkserver.take("cpu", root, child._SPAWNER.run, prewarm=True)
    assert second is not first and len(_servers(root)) == 3  # side by side: and a spare
    for srv in (first, second):
        forkserver.give_back(srv, -1)  # never used: retired, ended at the next take
    assert first.retired and second.retired and first.alive()
    third = forkserver.take("cpu", root, child._SPAWNER.run, prewarm=True)
    assert _servers(root) == [third]  # the spare; the retired two ended
    assert not first.alive() and not second.alive()
    forkserver.shut_down()
    assert _servers(root) == []


def test_a_server_retired_after_its_last_evaluation_leaves_that_evaluation_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Retired at `MAX_JOBS`: the judge still checks the staged task file in the evaluation's
    folder after the worker is gone (a server ended at once took that folder with it: the
    evaluation became a harness error, 'the task file changed during the evaluation')."""
    monkeypatch.setattr(forkserver, "MAX_JOBS", 1)
    work = (tmp_path / "work").resolve()
    task = get_task("softmax_fp32")
    for _ in range(2):
        verdict = evaluate(task, HOSTILE_DIR / "good_softmax.py", _config(work))
        assert verdict.passed, verdict.message
    assert len(_servers(work)) == 1 and _servers(work)[0].retired  # the second one, retired
    assert forked.evaluation_folders(work) == []


def test_a_process_forked_from_the_judge_does_not_share_its_servers(tmp_path: Path) -> None:
    from benchmarks.harness import child

    root = (tmp_path / "pool").resolve()
    root.mkdir()
    server = forkserver.take("cpu", root, child._SPAWNER.run, prewarm=False)
    pid = os.fork()
    if pid == 0:  # a fork of the judge: no server of the parent's in its pool
        os._exit(0 if forkserver._SERVERS == {} else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert server in _servers(root)  # the parent's pool is untouched
    forkserver.end_now(server)
