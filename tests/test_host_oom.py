"""A worker the kernel's OOM killer takes: the verdict says the machine ran out of memory (flag
host_oom) instead of blaming a plain crash, and a sweep judges that task again."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.harness import procfs
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.harness.static_check import StaticResult
from benchmarks.loading import get_task
from benchmarks.studies import solutions_table
from benchmarks.verdict import ErrorClass

SELF_KILL = """
import os
import signal


def silu(x):
    os.kill(os.getpid(), signal.SIGKILL)  # as the OOM killer would
"""


@pytest.mark.parametrize("oom", [True, False])
def test_a_worker_killed_while_the_oom_killer_ran_is_flagged(
    oom: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert procfs.oom_kills() is not None  # Linux: /proc/vmstat has the counter
    counts = iter(range(100)) if oom else iter([7] * 100)
    monkeypatch.setattr(procfs, "oom_kills", lambda: next(counts))
    monkeypatch.setattr(  # the candidate needs os: as if it had got past the static check
        "benchmarks.harness.judge.check_source",
        lambda *a, **k: StaticResult(ok=True, error_class=ErrorClass.NONE, message=""),
    )
    cand = tmp_path / "cand.py"
    cand.write_text(SELF_KILL)
    v = evaluate(get_task("silu_fp16"), cand, JudgeConfig(device="cpu", trials=1, prewarm=False))
    assert v.error_class == ErrorClass.CRASH and not v.passed, v.message
    assert ("host_oom" in v.flags) is oom, v.flags
    assert ("out-of-memory killer" in v.message) is oom and ("SIGKILL" in v.message), v.message


def test_a_sweep_judges_an_oom_killed_task_again(tmp_path: Path) -> None:
    from dying_judges import oom_first_time

    tasks = [get_task(t) for t in ("silu_fp16", "relu_squared_fp32", "softmax_fp16")]
    got = list(solutions_table._judge_all(tasks, tmp_path, "cpu", 1, False, 2, oom_first_time))
    assert sorted(v.task_id for v in got) == sorted(t.id for t in tasks)
    assert all(v.passed for v in got), [(v.task_id, v.flags) for v in got]


def test_a_sweep_judges_a_task_that_ran_the_gpu_out_of_memory_again_alone(tmp_path: Path) -> None:
    from dying_judges import gpu_oom_when_shared

    tasks = [get_task(t) for t in ("silu_fp16", "relu_squared_fp32", "softmax_fp16")]
    got = list(solutions_table._judge_all(tasks, tmp_path, "cpu", 1, False, 3, gpu_oom_when_shared))
    assert sorted(v.task_id for v in got) == sorted(t.id for t in tasks)
    assert all(v.passed for v in got), [(v.task_id, v.message) for v in got]
