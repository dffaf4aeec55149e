"""Stand-ins for `benchmarks.studies.solutions_table._judge_one` that a spawned pool process can
import (tests/ is on its path): judging processes that die the way the host's OOM killer kills
them (SIGKILL), to test that a sweep re-judges what was in flight."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from benchmarks.verdict import Verdict


def _ok(task_id: str, solutions: Path) -> dict:
    return Verdict(task_id=task_id, candidate=str(solutions), device="cpu", passed=True).model_dump(
        mode="json"
    )


def die_first_time(task_id: str, solutions: Path, device: str, trials: int, perf: bool) -> dict:
    """Killed the first time `task_id` is judged (a marker file under `solutions` remembers)."""
    marker = solutions / f"died_{task_id}"
    if task_id.startswith("silu") and not marker.exists():
        marker.write_text("x")
        os.kill(os.getpid(), signal.SIGKILL)
    return _ok(task_id, solutions)


def always_die(task_id: str, solutions: Path, device: str, trials: int, perf: bool) -> dict:
    if task_id.startswith("silu"):
        os.kill(os.getpid(), signal.SIGKILL)
    return _ok(task_id, solutions)


def oom_first_time(task_id: str, solutions: Path, device: str, trials: int, perf: bool) -> dict:
    """A silu task's first verdict says the kernel's OOM killer took its worker (flag host_oom)."""
    marker = solutions / f"oom_{task_id}"
    if task_id.startswith("silu") and not marker.exists():
        marker.write_text("x")
        return Verdict(
            task_id=task_id, candidate=str(solutions), device="cpu", flags=["host_oom"]
        ).model_dump(mode="json")
    return _ok(task_id, solutions)


def gpu_oom_when_shared(
    task_id: str, solutions: Path, device: str, trials: int, perf: bool
) -> dict:
    """A silu task fails with CUDA's out-of-memory error when another task is judged beside it
    (marker files, one per judging process at work, say so); the others hold theirs 3 s."""
    import time

    busy = solutions / f"busy_{os.getpid()}"
    busy.write_text("x")
    try:
        if not task_id.startswith("silu"):
            time.sleep(3.0)
            return _ok(task_id, solutions)
        end = time.monotonic() + 4.0
        while time.monotonic() < end:
            if len(list(solutions.glob("busy_*"))) > 1:
                return Verdict(
                    task_id=task_id,
                    candidate=str(solutions),
                    device="cpu",
                    error_class="harness_error",
                    message="worker failed: OutOfMemoryError: CUDA out of memory. Tried to "
                    "allocate 1.75 GiB.",
                ).model_dump(mode="json")
            time.sleep(0.05)
        return _ok(task_id, solutions)
    finally:
        busy.unlink()
