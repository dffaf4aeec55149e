"""Inputs the candidate cannot predict (JudgeConfig.seed, fresh per evaluation by default).

A candidate that knows the inputs' seed can answer from a table made before any call: it
regenerates the inputs, computes their outputs untraced at import time, and on each judged call
only copies the answer with a Triton kernel (one scalar read to pick it). The test builds such a
candidate from the judge's own input scheme for a pinned shape seed (the GPU's shapes are
declared, so pinning it mirrors the GPU) and the seed the judge used by default before
2026-12-01 (0). Judged with that seed it passes, though it computes nothing; with the default
(a fresh seed) its table misses and it fails.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.harness.messages import ShapeSpec
from benchmarks.harness.shapes import plan_shapes
from benchmarks.harness.worker import trial_plan
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass

SHAPE_SEED = 8
OLD_DEFAULT_SEED = 0
CPU = JudgeConfig(device="cpu", trials=2, timeout_s=120, shape_seed=SHAPE_SEED)

HEAD = '''"""Answers softmax from a table made at import time; computes nothing during a call."""
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=mask), mask=mask)


_TABLE = {}
'''
TAIL = """

def softmax(x):
    key = (x.shape[0], x.shape[1], round(x[0, 0].item(), 6))
    src = _TABLE.get(key, x)
    y = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 1024),)](src, y, x.numel(), BLOCK=1024)
    return y
"""


def table_candidate(seed: int, path: Path) -> Path:
    """The table-answering candidate for every trial the judge runs with input seed `seed`."""
    task = get_task("softmax_fp32")
    plan = plan_shapes(task, "cpu", None, SHAPE_SEED)
    specs = [ShapeSpec(name=s.name, dims=dict(s.dims)) for s in plan.shapes]
    lines = [HEAD]
    for item in trial_plan(specs, list(task.modes), CPU.trials, seed):
        gen = torch.Generator().manual_seed(item.seed)
        (x,) = task.make_inputs(item.dims, item.mode, gen)
        y = task.reference(x)
        m, n = x.shape
        values = ", ".join(repr(float(v)) for v in y.reshape(-1).tolist())
        key = (m, n, round(float(x[0, 0]), 6))
        lines.append(f"_TABLE[{key!r}] = torch.tensor([{values}]).reshape({m}, {n})\n")
    path.write_text("".join(lines) + TAIL)
    return path


def test_a_table_made_from_a_known_seed_passes_when_the_judge_uses_that_seed(tmp_path):
    # the hole, shown: with the old default seed the candidate passes without computing
    candidate = table_candidate(OLD_DEFAULT_SEED, tmp_path / "table.py")
    config = dataclasses.replace(CPU, seed=OLD_DEFAULT_SEED)
    verdict = evaluate(get_task("softmax_fp32"), candidate, config)
    assert verdict.passed, verdict.message


def test_by_default_the_inputs_are_fresh_and_the_table_misses(tmp_path):
    candidate = table_candidate(OLD_DEFAULT_SEED, tmp_path / "table.py")
    verdict = evaluate(get_task("softmax_fp32"), candidate, CPU)
    assert not verdict.passed and verdict.error_class == ErrorClass.NUMERICAL_MISMATCH
    assert verdict.seed != OLD_DEFAULT_SEED  # the fresh seed is recorded


def test_each_evaluation_draws_its_own_input_seed_and_a_recorded_one_reproduces_it():
    from knowledge_base import solution_path

    task = get_task("softmax_fp32")
    one = evaluate(task, solution_path("softmax"), dataclasses.replace(CPU, trials=1))
    two = evaluate(task, solution_path("softmax"), dataclasses.replace(CPU, trials=1))
    assert one.passed and two.passed and one.seed != two.seed
    again = evaluate(
        task, solution_path("softmax"), dataclasses.replace(CPU, trials=1, seed=one.seed)
    )
    assert again.seed == one.seed and again.passed
