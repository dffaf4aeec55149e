"""A sweep through the executors on the CPU: the inline executor and a local executor's lane
answer a SweepRequest with its Sweep record (not measured here: no GPU); the local executor's
CPU stage compiles every configuration ahead for the GPU's architecture, dealt over its compile
workers, and hands the union to the lane; the pieces of that stage on their own."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks import (
    EvalRequest,
    ExecutorSpec,
    JudgeConfig,
    Sweep,
    SweepRequest,
    make_executor,
)
from benchmarks.executor.precompile import (
    Precompiled,
    merged,
    precompile_sweep,
    seeded,
    sweep_chunks,
)
from benchmarks.loading import get_task
from knowledge_base import solution_path

GOOD = solution_path("silu").read_text()
HOSTILE = "import os\nos.system('touch /tmp/kf-sweep-never')\n" + GOOD
CPU = JudgeConfig(device="cpu", trusted=True, timeout_s=120)


def variants(blocks: list[int]) -> tuple[list[str], list[dict[str, Any]]]:
    """The silu solution with BLOCK set to each of `blocks`."""
    sources = [GOOD.replace("BLOCK: int = 4096", f"BLOCK: int = {b}") for b in blocks]
    return sources, [{"BLOCK": b} for b in blocks]


@pytest.fixture(scope="module")
def task():
    return get_task("silu_fp32")


def test_the_inline_executor_answers_a_sweep_with_its_record(task) -> None:
    sources, configs = variants([1024, 2048])
    request = SweepRequest(EvalRequest.for_task(task, GOOD, CPU), sources, configs)
    (got,) = make_executor(ExecutorSpec("inline", device="cpu")).map([request])
    assert isinstance(got, Sweep) and not got.measured
    assert got.reason.startswith("not measured (no GPU)") and len(got.entries) == 2
    assert request.label == "sweep of 2 configurations of candidate.py"


def test_a_local_lane_sweeps_after_its_cpu_stage_compiled_every_configuration(task) -> None:
    """On a GPU machine the CPU stage compiles ahead for the GPU's architecture; Triton
    cross-compiles, so the stage runs here for a Hopper target (9.0), the lane then answers on
    the CPU (not measured) and says what was compiled ahead."""
    sources, configs = variants([1024, 2048, 4096])
    executor = make_executor(ExecutorSpec("local", device="cpu", lanes=1, compile_workers=2))
    try:
        executor.target = (9, 0)
        request = SweepRequest(EvalRequest.for_task(task, GOOD, CPU), sources, configs)
        got = executor.submit(request).result(timeout=600)
    finally:
        executor.close()
    assert isinstance(got, Sweep) and not got.measured
    assert got.compile_note.startswith("2 compile process(es): chunk 0: compiled ahead"), (
        got.compile_note
    )
    assert "chunk 1: compiled ahead" in got.compile_note


def test_one_compile_process_compiles_its_chunk_and_skips_what_the_static_check_refuses(
    task,
) -> None:
    sources, configs = variants([1024, 2048])
    sources.append(HOSTILE)
    configs.append({"BLOCK": 4096})
    request = SweepRequest(
        EvalRequest.for_task(task, GOOD, JudgeConfig(device="cuda", trusted=True)),
        sources,
        configs,
    ).portable()
    staged = precompile_sweep(request, (9, 0), [0, 1, 2])
    assert staged.compile_note.startswith("compiled ahead"), staged.compile_note
    cubins = [n for n in staged.triton_files if n.endswith("_silu_kernel.cubin")]
    assert len(cubins) == 2, cubins  # one kernel per BLOCK; the hostile source never ran
    refused = precompile_sweep(request, (9, 0), [2])
    assert not refused.triton_files and "static check" in refused.compile_note
    assert precompile_sweep(request, None, [0]).compile_note.startswith("not compiled ahead")


def test_the_chunks_their_union_and_the_seeded_request(task, tmp_path) -> None:
    assert sweep_chunks(5, 2) == [[0, 2, 4], [1, 3]]
    assert sweep_chunks(2, 8) == [[0], [1]] and sweep_chunks(3, 0) == [[0, 1, 2]]
    union = merged(
        [
            Precompiled(True, triton_files={"A/k.cubin": b"a"}, compile_note="one"),
            Precompiled(True, triton_files={"B/k.cubin": b"b"}, compile_note="two"),
        ]
    )
    assert union.triton_files == {"A/k.cubin": b"a", "B/k.cubin": b"b"}
    assert union.compile_note == "2 compile process(es): chunk 0: one; chunk 1: two"
    sources, configs = variants([1024])
    request = SweepRequest(EvalRequest.for_task(task, GOOD, CPU), sources, configs)
    told = seeded(request, tmp_path, union)
    assert told.base.config.triton_cache_seed == str(tmp_path)
    assert told.compile_note == union.compile_note and told.sources == sources
    plain = EvalRequest.for_task(task, GOOD, CPU)
    assert seeded(plain, tmp_path, union).config.triton_cache_seed == str(tmp_path)
    assert seeded(plain, None, None) is plain


def test_a_remeasure_compiles_both_kernels_ahead_and_its_worker_is_seeded(task, tmp_path) -> None:
    """The re-measurement's CPU stage: the incumbent's and the candidate's kernels compiled for
    a Hopper target in one sandboxed process (Triton cross-compiles here), a hostile source
    never run, and the request told where the cache lies."""
    from benchmarks import RemeasureRequest
    from benchmarks.executor.precompile import precompile_remeasure

    faster, _ = variants([1024])
    cuda = JudgeConfig(device="cuda", trusted=True)
    request = RemeasureRequest(EvalRequest.for_task(task, faster[0], cuda), GOOD, 2).portable()
    staged = precompile_remeasure(request, (9, 0))
    assert staged.compile_note.startswith("compiled ahead"), staged.compile_note
    cubins = [n for n in staged.triton_files if n.endswith("_silu_kernel.cubin")]
    assert len(cubins) == 2, cubins  # BLOCK 4096 (the incumbent) and 1024 (the candidate)
    hostile = RemeasureRequest(EvalRequest.for_task(task, HOSTILE, cuda), GOOD, 2).portable()
    one = precompile_remeasure(hostile, (9, 0))
    assert len([n for n in one.triton_files if n.endswith(".cubin")]) == 1  # the incumbent's
    assert precompile_remeasure(request, None).compile_note.startswith("not compiled ahead")
    told = seeded(request, tmp_path, staged)
    assert told.candidate.config.triton_cache_seed == str(tmp_path)
    assert told.incumbent_source == GOOD and told.rounds == 2


def test_a_sweep_told_of_ahead_compiles_before_it_is_submitted_and_then_goes_straight_on(
    task,
) -> None:
    """`prepare`: the sweep's CPU stage starts when the executor is told of it (the agent does
    so while its first candidate is judged); the same sweep submitted later takes that stage's
    result and says so; a different sweep (another configuration) is staged as usual."""
    sources, configs = variants([1024, 2048])
    cuda = JudgeConfig(device="cuda", trusted=True)
    executor = make_executor(ExecutorSpec("local", device="cpu", lanes=1, compile_workers=2))
    try:
        executor.target = (9, 0)
        told = SweepRequest(EvalRequest.for_task(task, GOOD, cuda), sources, configs)
        executor.prepare(told)
        executor.prepare(told)  # told twice: staged once
        assert len(executor._prepared) == 1
        (staged,) = executor._prepared.values()
        staged.result(timeout=600)  # compiled before anything was submitted
        # submitted with fresh inputs (another seed) and judged on the CPU (not measured here)
        again = SweepRequest(EvalRequest.for_task(task, GOOD, CPU), sources, configs)
        got = executor.submit(again).result(timeout=600)
        assert not executor._prepared  # taken
        other_sources, other_configs = variants([1024])
        other = SweepRequest(EvalRequest.for_task(task, GOOD, CPU), other_sources, other_configs)
        executor.prepare(told)
        plain = executor.submit(other).result(timeout=600)
        assert len(executor._prepared) == 1  # the told one waits on; the other was not it
    finally:
        executor.close()
    assert isinstance(got, Sweep) and not got.measured
    assert got.compile_note.startswith(
        "compiled ahead while an earlier request was judged (prepare); 1 compile process(es)"
    ), got.compile_note
    assert plain.compile_note.startswith("1 compile process(es): chunk 0: compiled ahead"), (
        plain.compile_note
    )
