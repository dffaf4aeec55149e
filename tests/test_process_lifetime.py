"""Workers die with the judge that started them, and the next judge sweeps up (issue 16, item 6).

A judge killed while its worker runs a candidate must not leave the worker (or what it started)
running: under bubblewrap the sandbox dies with it (`--die-with-parent`, pid namespace);
unisolated (trusted baselines, `allow_unisolated`) the worker's sentinel kills its process group
(benchmarks/harness/sentinel.py), also while the candidate holds the GIL in C code. The worker
folder a killed judge leaves is removed by the next judge that uses the root
(benchmarks/harness/leftovers.py). Workers are forked from one long-lived thread, so a worker
started from a thread that then ends keeps running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from benchmarks.harness import leftovers, procfs, sandbox
from benchmarks.harness.child import Child, discard

REPO = Path(__file__).resolve().parents[1]
BWRAP = pytest.mark.skipif(
    sandbox.level() != sandbox.BWRAP, reason=f"no OS isolation here: {sandbox.detect().reason}"
)

# spins in one C call that holds the GIL for minutes: no thread of the worker can run, only
# another process can act. (It forked three sleepers first until 2026-12-07; a candidate's
# process starts are refused since, tests/test_process_refusal.py, and what the sandbox's
# processes become when its first one ends is tested in tests/test_sandbox_hostile.py.)
STUCK = textwrap.dedent(
    """
    def softmax(x):
        return sum(range(10**13))
    """
)

JUDGE = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from benchmarks.harness.child import acquire, send_inputs
    from benchmarks.harness.messages import CandidateJob, ShapeSpec
    from benchmarks.loading import get_task

    root, isolate = Path(sys.argv[1]), sys.argv[2] == "isolated"
    task = get_task("softmax_fp32")
    child = acquire("cpu", root, prewarm=False, isolate=isolate)
    (child.folder / "candidate.py").write_text(sys.stdin.read())
    shape = task.shapes_for("cpu")[0]
    child.submit(CandidateJob(
        task_path=child.stage(task.path), dtype=task.dtype,
        candidate_path=str(child.folder / "candidate.py"), device="cpu",
        shapes=[ShapeSpec(name=shape.name, dims=dict(shape.dims))], modes=["standard"],
        trials=1, seed=None, perf=False,
    ))
    send_inputs(child.folder, 0)
    while not any(e.kind == "call" for e in child.poll_events()):
        time.sleep(0.05)
    print(child.folder, flush=True)
    time.sleep(600)
    """
)


def _working_in(root: Path) -> list[int]:
    root = root.resolve()
    found = []
    for pid in procfs.pids():
        where = procfs.cwd(pid)
        if where and (Path(where) == root or root in Path(where).parents):
            found.append(pid)
    return found


def _settled(root: Path, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := _working_in(root)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _kill_judge_mid_call(root: Path, mode: str) -> tuple[Path, float]:
    """Start a judge in a process of its own, let its worker enter the candidate's call, kill the
    judge with SIGKILL; (the worker's folder, seconds until nothing worked in the root)."""
    judge = subprocess.Popen(
        [sys.executable, "-c", JUDGE, str(root), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=REPO,
    )
    try:
        assert judge.stdin is not None and judge.stdout is not None
        judge.stdin.write(STUCK)
        judge.stdin.close()
        folder = Path(judge.stdout.readline().strip())
        assert folder.is_dir(), "the judge never reached the candidate's call"
        time.sleep(1.0)  # the worker is inside sum()
        assert len(_working_in(root)) >= 1  # the worker (and its sandbox's processes)
    finally:
        judge.kill()
        judge.wait()
    t0 = time.monotonic()
    left = _settled(root, 5.0)
    assert left == [], f"still running after the judge was killed: {left}"
    return folder, time.monotonic() - t0


def test_an_unisolated_worker_dies_with_the_judge(tmp_path: Path) -> None:
    folder, seconds = _kill_judge_mid_call(tmp_path, "unisolated")
    assert seconds < 2.0, seconds
    assert folder.is_dir()  # nobody to clean up: the next judge's sweep
    assert leftovers.sweep(tmp_path) == [folder.resolve()]
    assert not folder.exists()


@BWRAP
def test_an_isolated_worker_dies_with_the_judge(tmp_path: Path) -> None:
    folder, seconds = _kill_judge_mid_call(tmp_path, "isolated")
    assert seconds < 2.0, seconds
    # the worker's folder, or the fork server's folder that holds it
    swept = leftovers.sweep(tmp_path)
    assert len(swept) == 1 and swept[0] in (folder.resolve(), *folder.resolve().parents), swept
    assert not folder.exists()


@pytest.mark.parametrize("isolate", [False, pytest.param(True, marks=BWRAP)])
def test_a_worker_started_from_a_thread_outlives_the_thread(tmp_path: Path, isolate: bool) -> None:
    made: list[Child] = []

    def start() -> None:
        folder = tmp_path / "w"
        folder.mkdir()
        made.append(Child(folder, "cpu", isolate=isolate))

    thread = threading.Thread(target=start)
    thread.start()
    thread.join()
    child = made[0]
    try:
        time.sleep(1.5)  # a parent-death signal tied to the thread would have fired by now
        assert child.proc.poll() is None, (
            f"the worker died with its thread: {child.proc.returncode}"
        )
    finally:
        discard(child)


def _gone_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_the_sweep_removes_only_folders_of_dead_judges(tmp_path: Path) -> None:
    mine = Path(f"{tmp_path}/{leftovers.owner_prefix()}live")
    dead = tmp_path / f"{leftovers.PREFIX}{_gone_pid()}-1234-dead"
    reused = tmp_path / f"{leftovers.PREFIX}{os.getpid()}-1-reused"  # our pid, another start
    fresh = tmp_path / f"{leftovers.PREFIX}oldstylefresh"
    stale = tmp_path / f"{leftovers.PREFIX}oldstylestale"
    busy = tmp_path / f"{leftovers.PREFIX}oldstylebusy"
    other = tmp_path / "not-a-worker"
    for folder in (mine, dead, reused, fresh, stale, busy, other):
        folder.mkdir()
    hour_ago = time.time() - 3600
    for folder in (stale, busy, other):
        os.utime(folder, (hour_ago, hour_ago))
    # a process still working in the dead judge's folder, and one in the busy old-style folder
    orphan = subprocess.Popen(["sleep", "60"], cwd=dead)
    worker = subprocess.Popen(["sleep", "60"], cwd=busy)
    try:
        removed = leftovers.sweep(tmp_path)
        assert sorted(removed) == sorted(p.resolve() for p in (dead, reused, stale))
        assert orphan.wait(timeout=5) == -signal.SIGKILL
        assert worker.poll() is None
        assert all(p.exists() for p in (mine, fresh, busy, other))
    finally:
        for proc in (orphan, worker):
            proc.kill()
            proc.wait()


def test_the_judge_names_its_folders_for_itself(tmp_path: Path) -> None:
    from benchmarks.harness.child import acquire

    child = acquire("cpu", tmp_path, prewarm=False, isolate=False)
    try:
        assert leftovers.owner_of(child.folder.name) == (
            os.getpid(),
            procfs.process_start(os.getpid())[1],  # type: ignore[index]
        )
    finally:
        discard(child)
