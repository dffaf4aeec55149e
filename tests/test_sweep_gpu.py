"""A sweep on a real GPU (`pytest -m gpu`, on the device machine): three configurations of the
knowledge base's softmax through the local executor (its CPU stage compiles them ahead, its GPU
lane times them in one sandboxed worker): the two correct ones get positive times on every
shape, the broken one is recorded as failed with its reason."""

from __future__ import annotations

import pytest
import torch

from benchmarks import EvalRequest, ExecutorSpec, JudgeConfig, Sweep, SweepRequest, make_executor
from benchmarks.loading import get_task
from knowledge_base import solution_path

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

SOLUTION = solution_path("softmax").read_text()


def test_a_gpu_sweep_times_the_correct_configurations_and_records_the_broken_one() -> None:
    task = get_task("softmax_fp32")
    broken = SOLUTION.replace(
        "y = tl.exp(x - row_max) * inv", "y = tl.exp(x - row_max) * inv * 2.0"
    )
    assert broken != SOLUTION
    sources = [
        SOLUTION,
        SOLUTION.replace("BLOCK_N: int = 4096", "BLOCK_N: int = 2048"),
        broken,
    ]
    configs = [{"BLOCK_N": 4096}, {"BLOCK_N": 2048}, {"BLOCK_N": 4096, "broken": True}]
    base = EvalRequest.for_task(task, SOLUTION, JudgeConfig(device="cuda", trusted=True))
    executor = make_executor(ExecutorSpec("local", device="cuda", compile_workers=2))
    try:
        got = executor.submit(SweepRequest(base, sources, configs)).result(timeout=600)
    finally:
        executor.close()
    assert isinstance(got, Sweep) and got.measured, got.reason
    assert [e.index for e in got.entries][2] == 2  # measured first, the failed one last
    for entry in got.entries[:2]:
        assert sorted(entry.times_us) == sorted(s.name for s in task.shapes)
        assert all(t > 0 for t in entry.times_us.values()) and entry.score > 0
    failed = got.entries[2]
    assert not failed.measured and "off by up to" in failed.error, failed.error
    assert "compiled ahead" in got.compile_note, got.compile_note
    print(f"sweep of 3 in {got.seconds:.1f} s; {got.compile_note}")
