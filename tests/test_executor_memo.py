"""A source judged again (a re-evaluation, an incumbent re-measured) reuses the Triton cache the
local executor's CPU stage compiled for it the first time, and only for the same source, task,
shapes and GPU: what one candidate compiled never reaches another."""

from __future__ import annotations

import dataclasses

import pytest

from benchmarks import EvalRequest, ExecutorSpec, JudgeConfig, make_executor
from benchmarks.executor.precompile import CompiledMemo, compile_key
from benchmarks.loading import get_task
from knowledge_base import solution_path

GOOD = solution_path("silu").read_text()
CPU = JudgeConfig(device="cpu", trusted=True, timeout_s=120)


@pytest.fixture(scope="module")
def task():
    return get_task("silu_fp32")


def test_the_key_names_source_task_shapes_and_gpu(task) -> None:
    request = EvalRequest.for_task(task, GOOD, CPU)
    key = compile_key(request, (9, 0))
    assert key == compile_key(EvalRequest.for_task(task, GOOD, CPU), (9, 0))
    others = [
        compile_key(request, (8, 0)),
        compile_key(request, (9, 0), GOOD + "\n# another\n"),
        compile_key(EvalRequest.for_task(get_task("silu_fp16"), GOOD, CPU), (9, 0)),
        compile_key(
            dataclasses.replace(request, config=dataclasses.replace(CPU, shapes=["tiny"])),
            (9, 0),
        ),
        compile_key(dataclasses.replace(request, task_sha256="0" * 64), (9, 0)),
    ]
    assert key not in others and len(set(others)) == len(others)


def test_the_memo_keeps_the_most_recent_caches_within_its_bytes() -> None:
    memo = CompiledMemo(limit=10)
    memo.put("a", {"a/k.cubin": b"1234"})
    memo.put("b", {"b/k.cubin": b"1234"})
    assert memo.get("a") is not None  # a is now the most recently used
    memo.put("c", {"c/k.cubin": b"1234"})  # 12 bytes: b, the least recent, goes
    assert memo.get("b") is None and memo.get("a") and memo.get("c")
    memo.put("big", {"x": b"0" * 11})  # larger than the whole memo: not kept
    memo.put("empty", {})
    assert memo.get("big") is None and memo.get("empty") is None
    both = memo.reused(["a", "c"])
    assert both is not None and both.static_ok and both.seconds == 0.0
    assert both.triton_files == {"a/k.cubin": b"1234", "c/k.cubin": b"1234"}
    assert "reused" in both.compile_note
    assert memo.reused(["a", "b"]) is None, "one cache missing: the stage compiles"


def test_a_source_judged_again_skips_the_compile_stage_another_does_not(task) -> None:
    """The first judging compiles ahead for a Hopper target (Triton cross-compiles here); the
    same source again goes straight to the lane with that cache; a variant compiles anew."""
    executor = make_executor(ExecutorSpec("local", device="cpu", lanes=1, compile_workers=1))
    try:
        executor.target = (9, 0)
        request = EvalRequest.for_task(task, GOOD, CPU)
        first = executor.submit(request).result(timeout=600)
        assert first.passed, first.message
        kept = executor.memo.get(compile_key(request.portable(), (9, 0)))
        assert kept and any(n.endswith("_silu_kernel.cubin") for n in kept), kept
        submitted: list[object] = []
        pool_submit = executor._pool.submit

        def counting(fn, *args):
            submitted.append(fn)
            return pool_submit(fn, *args)

        executor._pool.submit = counting
        again = executor.submit(request).result(timeout=600)
        assert again.passed and not submitted
        assert again.stage_seconds["executor_cpu_stage"] == 0.0
        variant = EvalRequest.for_task(task, GOOD + "\n# a variant\n", CPU)
        other = executor.submit(variant).result(timeout=600)
        assert other.passed and len(submitted) == 1
    finally:
        executor.close()
