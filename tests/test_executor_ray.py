"""The Ray executor on a local Ray instance on the CPU (2 CPUs): a batch comes back in order
with the judge's verdicts, task files travel with the requests, and a Ray worker killed while it
judges is replaced by Ray and the request still completes (max_retries)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

pytest.importorskip(
    "ray", reason="Ray is not installed: pip install 'kernforge[ray]' to test the ray executor"
)

from benchmarks import EvalRequest, ExecutorSpec, JudgeConfig, make_executor  # noqa: E402
from benchmarks.loading import get_task  # noqa: E402
from knowledge_base import solution_path  # noqa: E402

GOOD = solution_path("silu").read_text()
NO_KERNEL = "import torch\n\n\ndef silu(x):\n    return x * 2\n"
SLOW = "_SPIN = sum(range(40_000_000))\n" + GOOD  # a second or more at import
CONFIG = JudgeConfig(device="cpu", trials=1, trusted=True, shape_seed=7, timeout_s=120)


@pytest.fixture(scope="module")
def ray_executor():
    executor = make_executor(ExecutorSpec("ray", device="cpu", ray_cpus=2))
    yield executor
    executor.close()


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _ours(pid: int) -> bool:
    """Whether `pid` descends from this test process (the local Ray it started)."""
    while pid > 1:
        pid = _parent(pid)
        if pid == os.getpid():
            return True
    return False


def _judging_pids() -> list[int]:
    """Workers of the Ray this test started that are judging a candidate now: their title
    names the judge task, and one of their children is a judge's worker process (or, forked,
    one of their descendants)."""
    commands = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                commands[int(entry.name)] = (entry / "cmdline").read_bytes()
            except OSError:
                continue
    judges = {p for p, cmd in commands.items() if cmd.startswith(b"ray::judge_on_ray")}
    busy = {_parent(p) for p, cmd in commands.items() if b"benchmarks.harness.worker" in cmd}
    # a worker forked from a fork server (benchmarks/harness/forkserver.py) carries the server's
    # command line: a judge with more than one such descendant (server, intermediate fork, the
    # worker's init, the worker) is judging; the server alone waits
    forked: dict[int, int] = {}
    for pid, cmd in commands.items():
        if b"benchmarks.harness.forkserver" in cmd:
            up = pid
            while up > 1 and up not in judges:
                up = _parent(up)
            forked[up] = forked.get(up, 0) + 1
    busy |= {p for p, n in forked.items() if n > 1}
    return sorted(p for p in judges & busy if _ours(p))


def test_a_batch_on_ray_survives_a_killed_worker_and_comes_back_in_order(ray_executor):
    """One batch (kept small: Ray's start and a cold judge worker dominate on two CPUs): the
    worker judging the slow candidate is killed mid-candidate; Ray runs the task again, and the
    batch's verdicts come back in order, the judge's own (the statically refused candidate
    never starts a worker, so the only judge with a child is the slow one's)."""
    task = get_task("silu_fp32")
    requests = [
        EvalRequest.for_task(task, src, CONFIG, label=name, ship_task=True)
        for name, src in (("slow", SLOW), ("no_kernel", NO_KERNEL))
    ]
    futures = [ray_executor.submit(r) for r in requests]
    deadline = time.monotonic() + 120
    pids: list[int] = []
    while not pids and time.monotonic() < deadline:
        time.sleep(0.05)
        pids = _judging_pids()
    assert pids, "no Ray worker took the slow candidate"
    assert not futures[0].done()  # killed mid-candidate
    for pid in pids:
        os.kill(pid, signal.SIGKILL)  # a worker of the Ray this test started
    slow, bad = (f.result(timeout=300) for f in futures)
    assert (bad.candidate, bad.passed, bad.error_class.value) == (
        "no_kernel",
        False,
        "no_triton_kernel",
    )
    assert (slow.candidate, slow.passed, slow.stage_reached.value) == ("slow", True, "no_fallback")
    assert slow.shape_seed == 7 and slow.isolation
    assert ray_executor.slots == 2 and ray_executor.describe().startswith("ray: local Ray")


def test_a_sweep_on_ray_runs_its_cpu_stage_in_chunks_then_answers_with_its_record(ray_executor):
    """A sweep on Ray: its CPU stage in chunks (one CPU task each; on this CPU-only Ray the
    stage is asked for a Hopper target, which Triton cross-compiles), then the task that sweeps
    (here on the CPU: not measured), whose record says what was compiled ahead."""
    from benchmarks import Sweep, SweepRequest

    task = get_task("silu_fp32")
    sources = [GOOD.replace("BLOCK: int = 4096", f"BLOCK: int = {b}") for b in (1024, 2048)]
    request = SweepRequest(
        EvalRequest.for_task(task, GOOD, CONFIG, ship_task=True),
        sources,
        [{"BLOCK": 1024}, {"BLOCK": 2048}],
    )
    ray_executor.target = (9, 0)
    try:
        got = ray_executor.submit(request).result(timeout=600)
    finally:
        ray_executor.target = None
    assert isinstance(got, Sweep) and not got.measured
    assert got.reason.startswith("not measured (no GPU)") and len(got.entries) == 2
    assert got.compile_note.startswith("2 compile process(es): chunk 0: compiled ahead"), (
        got.compile_note
    )


def test_a_baseline_request_on_ray_comes_back_as_its_record(ray_executor):
    """The baselines an agent run sends ahead go to Ray as a task of their own (a GPU task on a
    GPU cluster) and come back as their record; on this CPU-only Ray: not measured."""
    from benchmarks import BaselineRequest
    from benchmarks.executor.request import BaselinesReady

    task = get_task("silu_fp32")
    request = BaselineRequest(EvalRequest.for_task(task, "", CONFIG, ship_task=True))
    got = ray_executor.submit(request).result(timeout=300)
    assert isinstance(got, BaselinesReady) and got.status == "not measured", got
