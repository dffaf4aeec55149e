"""The judge survives its candidate (issue 13, item 7), CPU interpreter under bubblewrap.

Each hostile candidate below exhausts memory, fills the disk, forks without end, signals its
parent or hangs. Through the whole judge (past the static check where the candidate needs what
the check forbids: its `# unchecked:` header names the verdict it must then get), each must end in
its verdict; then, in the same process, an honest kernel must pass; and nothing may be left: no
worker folder, no process working in one, no file the candidate wrote in the host's /tmp or
/dev/shm. The watchdog's limits are lowered here so that a failure cannot hurt the machine.
GPU variants (`res_*_gpu.py`) run in tests/test_judge_gpu.py on the device."""

from __future__ import annotations

import os
import time
from pathlib import Path

import forked
import pytest
from hostile_manifest import HOSTILE_DIR, HostileCase, parse_header

from benchmarks.harness import procfs, sandbox
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.harness.static_check import StaticResult
from benchmarks.harness.watchdog import GiB, MiB, WatchLimits
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass

pytestmark = pytest.mark.skipif(
    sandbox.level() != sandbox.BWRAP, reason=f"no OS isolation here: {sandbox.detect().reason}"
)

WATCH = WatchLimits(
    memory=1 * GiB, processes=32, folder_bytes=256 * MiB, folder_files=2000, poll_s=0.1
)
# case -> words its verdict's message must contain
CASES = {
    "res_memory_hog": ("memory",),
    "res_disk_filler": ("(disk limit)",),  # a full sandbox tmpfs or too many files: either
    "res_fork_bomb": ("a process was started",),
    "os_fork_many": ("a process was started",),
    "res_kill_parent": (),
    "os_setsid_daemon": ("a process was started",),
    "res_hang_sigstop": ("ran past", "during the call"),
    "res_hang_in_kernel": ("ran past", "during the call"),
}


def _config(work: Path, case: HostileCase | None = None) -> JudgeConfig:
    hang = case is not None and ErrorClass.TIMEOUT in (case.expect, case.unchecked)
    return JudgeConfig(
        device="cpu",
        trials=1,
        # counted from the job's start: a cold worker's start-up is not in it
        timeout_s=10 if hang else 180,
        prewarm=False,
        work_root=work,
        watch=WATCH,
    )


def _working_in(root: Path) -> list[int]:
    """Processes whose working directory is under `root` (every worker starts in its folder),
    but for the live fork servers, which serve the next evaluation."""
    root = root.resolve()
    found = []
    servers = forked.server_processes()
    for pid in sorted(set(procfs.pids()) - servers):
        where = procfs.cwd(pid)
        if where and (Path(where) == root or root in Path(where).parents):
            found.append(pid)
    return found


def _settled(root: Path, seconds: float = 3.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := _working_in(root)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def _host_files(prefix: str) -> list[str]:
    return [str(p) for d in (Path("/tmp"), Path("/dev/shm")) for p in d.glob(f"{prefix}*")]


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_attack_ends_in_its_verdict_and_the_next_evaluation_passes(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = parse_header(HOSTILE_DIR / f"{name}.py")
    expect = case.unchecked or case.expect
    work = tmp_path / "work"
    before = set(_host_files("kf_fill_"))
    with monkeypatch.context() as patched:
        if case.unchecked is not None:  # as if it had found a hole in the static check
            patched.setattr(
                "benchmarks.harness.judge.check_source",
                lambda *a, **k: StaticResult(ok=True, error_class=ErrorClass.NONE, message=""),
            )
        verdict = evaluate(get_task(case.task), case.path, _config(work, case))
    assert verdict.error_class == expect, verdict.message
    for word in CASES[name]:
        assert word in verdict.message, verdict.message
    assert _settled(work) == [], "a process of the candidate outlived its evaluation"
    assert forked.evaluation_folders(work) == [], "its worker folder was left behind"
    assert set(_host_files("kf_fill_")) == before, "it wrote into the host's /tmp or /dev/shm"

    honest = evaluate(get_task("softmax_fp32"), HOSTILE_DIR / "good_softmax.py", _config(work))
    assert honest.passed, honest.message
    assert forked.evaluation_folders(work) == []
    assert os.getpid() in procfs.pids()  # and so are we
