"""Decode shapes timed as served, inside a CUDA graph (benchmarks/harness/graph_timing.py): the
parts a CPU can check. How many calls a graph holds, which figure the score uses, the judge's
audit of the captured calls, the record on the wire, and the check of the graph's replay after
its inputs changed. The capture itself runs on the device (tests/test_graph_timing_gpu.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from benchmarks.harness import after_timing
from benchmarks.harness.calls import CallAudit
from benchmarks.harness.graph_timing import (
    MAX_CALLS,
    MIN_CALLS,
    copy_inputs,
    graph_nudge,
    input_bytes,
    plan_calls,
    wants_graph,
)
from benchmarks.harness.judge import _check_after_timing
from benchmarks.harness.messages import (
    CandidateJob,
    CandidatePerf,
    CandidateResult,
    FallbackInfo,
    GraphTiming,
    ShapeSpec,
    ShapeTiming,
    StreamProfile,
    dump,
    parse_result,
)
from benchmarks.harness.perf import choose_timing
from benchmarks.harness.transport import write_trial
from benchmarks.harness.worker import trial_seed
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass, ShapeResult, Verdict

MB = 1 << 20


def test_only_decode_shapes_are_timed_inside_a_graph() -> None:
    assert wants_graph("decode")
    assert not wants_graph("prefill")


def test_a_graph_holds_enough_copies_to_read_past_the_l2() -> None:
    # 1 MB of inputs against a 100 MB flush: 100 copies, each call then reads from HBM
    assert plan_calls(1 * MB, 100 * MB) == 100
    # big inputs still give the replay's launch MIN_CALLS calls to be amortised over
    assert plan_calls(500 * MB, 100 * MB) == MIN_CALLS
    # tiny inputs stop at MAX_CALLS
    assert plan_calls(1024, 100 * MB) == MAX_CALLS
    # copies that would not fit: as many as fit, but never fewer than two
    assert plan_calls(1024 * MB, 100 * MB, max_total=4096 * MB) == 4
    assert plan_calls(8192 * MB, 100 * MB, max_total=4096 * MB) == 2


def test_input_copies_keep_strides_and_values_and_share_expanded_views() -> None:
    base = torch.arange(12.0).reshape(3, 4)
    view = base.t()  # strides (1, 4)
    expanded = torch.ones(4).expand(3, 4)
    copy = copy_inputs((view, expanded, 7))
    assert copy[0].stride() == view.stride() and torch.equal(copy[0], view)
    assert copy[0].data_ptr() != view.data_ptr()
    assert copy[1] is expanded  # cannot be written with stride 0: shared
    assert copy[2] == 7
    assert input_bytes((base, base.t(), 3)) == base.numel() * 4  # one storage counted once


def _shape(**kw: object) -> ShapeResult:
    return ShapeResult(shape="s", dims={"M": 1}, dtype="fp32", phase="decode", **kw)


def test_the_score_uses_graph_times_when_every_method_has_one() -> None:
    sr = _shape(candidate_us=40.0, eager_us=30.0, compile_us=20.0)
    base = {"eager_graph_us": 9.0, "compile_graph_us": 6.0}
    choose_timing(sr, {"graph_us": 5.0}, base, asked=True)
    assert sr.timing == "graph"
    assert (sr.candidate_us, sr.eager_us, sr.compile_us) == (5.0, 9.0, 6.0)
    assert (sr.call_us, sr.eager_call_us, sr.compile_call_us) == (40.0, 30.0, 20.0)
    assert (sr.graph_us, sr.eager_graph_us, sr.compile_graph_us) == (5.0, 9.0, 6.0)
    assert any("inside a CUDA graph" in n for n in sr.notes)


def test_without_the_candidates_graph_time_every_method_is_timed_call_by_call() -> None:
    sr = _shape(candidate_us=40.0, eager_us=30.0, compile_us=20.0)
    base = {"eager_graph_us": 9.0, "compile_graph_us": 6.0}
    choose_timing(sr, {"error": "capture failed: RuntimeError: sync"}, base, asked=True)
    assert sr.timing == "call"
    assert (sr.candidate_us, sr.eager_us, sr.compile_us) == (40.0, 30.0, 20.0)
    assert sr.eager_graph_us == 9.0  # kept, not used
    assert any("capture failed" in n for n in sr.notes)


def test_without_a_baselines_graph_time_every_method_is_timed_call_by_call() -> None:
    sr = _shape(candidate_us=40.0, eager_us=30.0, compile_us=20.0)
    base = {"eager_graph_us": 9.0, "compile_graph_us": None, "graph_error": "torch.compile: X"}
    choose_timing(sr, {"graph_us": 5.0}, base, asked=True)
    assert sr.timing == "call" and sr.candidate_us == 40.0 and sr.graph_us == 5.0
    assert any("torch.compile (torch.compile: X)" in n for n in sr.notes)


def test_a_torch_compile_that_failed_outright_does_not_block_graph_times() -> None:
    sr = _shape(candidate_us=40.0, eager_us=30.0, compile_us=None)
    choose_timing(sr, {"graph_us": 5.0}, {"eager_graph_us": 9.0}, asked=True)
    assert sr.timing == "graph" and sr.candidate_us == 5.0 and sr.compile_us is None


def test_prefill_shapes_keep_their_per_call_times() -> None:
    sr = _shape(candidate_us=40.0, eager_us=30.0, compile_us=20.0)
    choose_timing(sr, None, {}, asked=False)
    assert sr.timing == "call" and sr.candidate_us == 40.0 and sr.graph_us is None
    assert sr.call_us == 40.0


def _info(launches: dict[str, int], **kw: object) -> FallbackInfo:
    fields = {"compute_ops": {}, "all_ops": {}, "output_problems": [], **kw}
    return FallbackInfo(launches=launches, **fields)


def _timing(graph: GraphTiming | None) -> ShapeTiming:
    return ShapeTiming(
        launches_per_call=1,
        launches_while_timed=10,
        calls_while_timed=10,
        candidate_us=40.0,
        p20_us=39.0,
        p80_us=41.0,
        reps=10,
        method="events",
        side_stream=False,
        profile=StreamProfile({}, 0.0, 0.0, None, False),
        timed_launch_counts={"1": 10},
        timed_kernels=["_k"],
        traced_calls=[_info({"_k": 1}), _info({"_k": 1})],
        after_file="after_timing_0.json",
        graph=graph,
    )


def _audit(graph: GraphTiming | None) -> CallAudit:
    audit = CallAudit()
    audit.check("s", "trial 1", _info({"_k": 1}))
    audit.check("s", "trial 2", _info({"_k": 1}))
    audit.check_perf(CandidatePerf(launch_floor_us=3.0, shapes={"s": _timing(graph)}))
    return audit


def _graph(launches: dict[str, int], calls: int = 8, **kw: object) -> GraphTiming:
    return GraphTiming(
        calls=calls,
        launches=sum(launches.values()),
        kernels=sorted(launches),
        graph_us=5.0,
        after_file="graph_after_0.json",
        traced=_info(launches, **kw),
    )


def test_captured_calls_that_launch_what_every_call_launches_pass_the_audit() -> None:
    assert _audit(_graph({"_k": 16})).failure is None
    assert _audit(None).failure is None
    assert _audit(GraphTiming(error="capture failed: x")).failure is None


def test_captured_calls_that_skip_work_fail_the_audit() -> None:
    audit = _audit(_graph({"_k": 8}))  # the 8 uncaptured calls launched, the captured ones not
    assert audit.failure is not None and audit.failure.error == ErrorClass.LAUNCH_MISMATCH
    assert "captured" in audit.failure.message


def test_captured_calls_that_compute_with_pytorch_fail_the_audit() -> None:
    info = dict(all_ops={"aten::mm": 8})
    audit = _audit(_graph({"_k": 16}, **info))
    assert audit.failure is not None and audit.failure.error == ErrorClass.FALLBACK
    assert "CUDA graph" in audit.failure.message


def test_a_graph_time_without_a_record_of_its_capture_fails_the_audit() -> None:
    graph = dataclasses.replace(_graph({"_k": 16}), traced=None)
    audit = _audit(graph)
    assert audit.failure is not None and audit.failure.error == ErrorClass.HARNESS_ERROR


def test_a_graph_timing_crosses_the_wire_intact() -> None:
    result = CandidateResult()
    result.perf = CandidatePerf(launch_floor_us=3.0, shapes={"s": _timing(_graph({"_k": 16}))})
    back = parse_result(CandidateResult, dump(result))
    assert back.perf == result.perf
    assert back.perf.shapes["s"].graph.traced.launches == {"_k": 16}


# -- the judge checks the graph's replay on inputs it changes itself --------------------------


def _silu_job(seed: int) -> tuple[object, CandidateJob, dict[str, int]]:
    task = get_task("silu_fp32")
    dims = {"M": 3, "N": 40}
    job = CandidateJob(
        task_path=str(task.path),
        dtype="fp32",
        candidate_path="candidate.py",
        device="cpu",
        shapes=[ShapeSpec(name="d", dims=dims, graph=True)],
        modes=["standard"],
        trials=1,
        seed=seed,
        perf=True,
    )
    return task, job, dims


def _inputs(task: object, dims: dict[str, int], seed: int) -> tuple:
    gen = torch.Generator().manual_seed(trial_seed(seed, "d", "perf", 0))
    return task.make_inputs(dims, "standard", gen)


def _ship(
    tmp_path: Path,
    task: object,
    dims: dict[str, int],
    seed: int,
    *,
    stale_graph: bool,
    recomputed: float = 1.0,
) -> CandidateResult:
    """What an honest worker ships (the call after timing and the graph's replay, each on the
    timing inputs changed its own way), or a graph replay answering the unchanged inputs."""
    (x,) = _inputs(task, dims, seed)
    after_timing.change_inputs((x,), seed, "d")
    after = write_trial(tmp_path, "after_timing_0", task.reference_for(dims)(x), None, [], [x])
    (g,) = _inputs(task, dims, seed)
    answer = task.reference_for(dims)(g)  # before the change: what a stale graph holds
    graph_nudge((g,), seed, "d")
    if not stale_graph:
        fresh = task.reference_for(dims)(g)
        # a graph that recomputed only the first `recomputed` share of the output while captured
        cut = int(recomputed * fresh.numel())
        answer = torch.cat([fresh.reshape(-1)[:cut], answer.reshape(-1)[cut:]]).reshape(fresh.shape)
    graph_file = write_trial(tmp_path, "graph_after_0", answer, None, [], [g])
    timing = dataclasses.replace(
        _timing(dataclasses.replace(_graph({"_k": 16}), after_file=graph_file)), after_file=after
    )
    result = CandidateResult()
    result.perf = CandidatePerf(launch_floor_us=3.0, shapes={"d": timing})
    return result


def test_the_graphs_replay_after_its_inputs_changed_is_checked(tmp_path: Path) -> None:
    task, job, dims = _silu_job(seed=11)
    verdict = Verdict(task_id=task.id)
    gen = torch.Generator()
    honest = _ship(tmp_path, task, dims, 11, stale_graph=False)
    assert _check_after_timing(task, job, tmp_path, gen, honest, verdict) is None
    stale = _ship(tmp_path, task, dims, 11, stale_graph=True)
    failure = _check_after_timing(task, job, tmp_path, gen, stale, verdict)
    assert failure is not None
    assert failure.error in (ErrorClass.NUMERICAL_MISMATCH, ErrorClass.NAN_INF_MISMATCH)
    assert "outside the graph's capture" in failure.message


def test_a_graph_that_did_part_of_the_work_while_captured_is_caught(tmp_path: Path) -> None:
    # 60 % recomputed, the rest left from an answer made before the capture: one changed
    # element would slip through 60 % of the time; CHANGED_PER_INPUT (8) of them about 2 %
    task, job, dims = _silu_job(seed=11)
    partial = _ship(tmp_path, task, dims, 11, stale_graph=False, recomputed=0.6)
    failure = _check_after_timing(
        task, job, tmp_path, torch.Generator(), partial, Verdict(task_id=task.id)
    )
    assert failure is not None and "outside the graph's capture" in failure.message


def test_a_graph_time_without_its_replay_is_a_harness_error(tmp_path: Path) -> None:
    task, job, dims = _silu_job(seed=5)
    result = _ship(tmp_path, task, dims, 5, stale_graph=False)
    timing = result.perf.shapes["d"]
    result.perf = CandidatePerf(
        launch_floor_us=3.0,
        shapes={
            "d": dataclasses.replace(timing, graph=dataclasses.replace(timing.graph, after_file=""))
        },
    )
    failure = _check_after_timing(
        task, job, tmp_path, torch.Generator(), result, Verdict(task_id=task.id)
    )
    assert failure is not None and failure.error == ErrorClass.HARNESS_ERROR


def test_the_cost_study_says_not_measured_without_a_gpu(capsys) -> None:
    from benchmarks.studies.graph_timing_cost import main

    if torch.cuda.is_available():  # pragma: no cover - the device runs it for real
        return
    assert main(["--tasks", "silu_fp32"]) == 2
    assert "not measured" in capsys.readouterr().out
