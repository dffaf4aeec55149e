"""The judge decides from what the worker ships, not from the worker's own conclusions: a scripted
worker (its lines and trial files written by the test) that reports PyTorch ops but classifies
none as compute, ships changed inputs but says none changed, sends no record, or launches other
kernels on one call than on the others gets the verdict the judge's own checks give."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from test_judge_protocol import CONFIG, IMPORTED, SHAPES, TASK, _scripted_child

from benchmarks.harness import messages as m
from benchmarks.harness.calls import PYTHON_ELEMENT_LIMIT, CallAudit
from benchmarks.harness.judge import _run_candidate
from benchmarks.harness.transport import write_trial
from benchmarks.harness.worker import trial_plan
from benchmarks.verdict import ErrorClass, Stage, Verdict

SPECS = [m.ShapeSpec(name=s.name, dims=dict(s.dims)) for s in SHAPES]
TRIALS = 2


def record(launches: dict[str, int] | None = None, **fields) -> m.FallbackInfo:
    """A clean call record (one launch of _k) with `fields` replaced."""
    base = {
        "compute_ops": {},
        "all_ops": {"empty_like": 1},
        "launches": {"_k": 1} if launches is None else launches,
        "output_problems": [],
    }
    base.update(fields)
    return m.FallbackInfo(**base)


def _judge(tmp_path: Path, records=None, inputs=None, forge=None, piped=()) -> Verdict:
    """Every trial of the plan shipped with the reference's outputs; `records(trial)` gives
    (call record, repeat record) and `inputs(trial, args)` the inputs shipped back; `forge(trial,
    header)` may rewrite a trial's header once written."""
    records = records or (lambda t: (record(), record() if t.first else None))
    inputs = inputs or (lambda t, args: args)
    lines = list(IMPORTED)
    for trial in trial_plan(SPECS, list(TASK.modes), TRIALS, 0):
        gen = torch.Generator().manual_seed(trial.seed)
        args = TASK.make_inputs(trial.dims, trial.mode, gen)
        want = TASK.reference_for(trial.dims)(*args)
        shipped = inputs(trial, [a.clone() if isinstance(a, torch.Tensor) else a for a in args])
        write_trial(
            tmp_path,
            f"trial_{trial.n}",
            want,
            want if trial.first else None,
            [],
            shipped,
            args if trial.first else None,
        )
        if forge is not None:
            path = tmp_path / f"trial_{trial.n}.json"
            header = json.loads(path.read_text())
            forge(trial, header)
            path.write_text(json.dumps(header))
        call, repeat = records(trial)
        evt = m.TrialEvent(
            t=2.0,
            n=trial.n,
            file=f"trial_{trial.n}.json",
            call_s=0.1,
            fallback=call,
            repeat_fallback=repeat,
        )
        lines.append(m.dump(evt).encode())
    lines.append(m.dump(m.CorrectnessDoneEvent(t=3.0)).encode())
    job = m.CandidateJob(
        task_path=str(TASK.path),
        dtype=TASK.dtype,
        candidate_path=str(tmp_path / "candidate.py"),
        device="cpu",
        shapes=SPECS,
        modes=list(TASK.modes),
        trials=TRIALS,
        seed=0,
        perf=False,
    )
    verdict = Verdict(task_id=TASK.id, candidate="scripted", device="cpu")
    child = _scripted_child(tmp_path, lines, m.dump(m.CandidateResult()).encode(), piped)
    return _run_candidate(verdict, TASK, child, job, SHAPES, CONFIG)


def test_clean_records_on_every_call_pass(tmp_path):
    verdict = _judge(tmp_path)
    assert verdict.passed and verdict.stage_reached == Stage.NO_FALLBACK, verdict.message


def test_the_judge_classifies_the_ops_itself(tmp_path):
    # the worker's compute_ops says nothing (a patched recorder); all_ops lists exp
    def records(t):
        if t.mode == "outlier" and t.trial == 1:
            return record(all_ops={"empty_like": 1, "exp": 2}, compute_ops={}), None
        return record(), record() if t.first else None

    verdict = _judge(tmp_path, records)
    assert verdict.error_class == ErrorClass.FALLBACK, verdict.message
    assert "exp x2" in verdict.message and "mode outlier, trial 1" in verdict.message
    assert verdict.fallback_ops == ["exp"]


def test_compute_inside_a_launch_is_a_fallback(tmp_path):
    def records(t):
        return record(launch_ops={"_to_copy": 2, "mul": 3}), record() if t.first else None

    verdict = _judge(tmp_path, records)
    assert (
        verdict.error_class == ErrorClass.FALLBACK and "inside a Triton launch" in verdict.message
    )


def test_many_scalar_reads_are_python_compute(tmp_path):
    def records(t):
        reads = PYTHON_ELEMENT_LIMIT + 1 if t.trial == 1 else 2
        return record(scalar_reads=reads), record() if t.first else None

    verdict = _judge(tmp_path, records)
    assert verdict.error_class == ErrorClass.FALLBACK and "into Python" in verdict.message


def test_an_evasion_seen_by_the_probes_fails(tmp_path):
    def records(t):
        return record(evasions=["it started 1 thread(s)"]), None

    verdict = _judge(tmp_path, records)
    assert verdict.error_class == ErrorClass.TRACE_EVADED and "thread" in verdict.message


def test_a_call_without_its_record_is_a_harness_verdict(tmp_path):
    def records(t):
        return (None if t.n == 3 else record()), record() if t.first else None

    verdict = _judge(tmp_path, records)
    assert verdict.error_class == ErrorClass.HARNESS_ERROR and "no record" in verdict.message


def test_other_kernels_on_one_call_fail_the_candidate(tmp_path):
    # Triton on the first trial and its repeat, a copy kernel on the outlier trials
    def records(t):
        if t.mode == "outlier":
            return record({"_copy": 1}), None
        return record(), record() if t.first else None

    verdict = _judge(tmp_path, records)
    assert verdict.error_class == ErrorClass.LAUNCH_MISMATCH and not verdict.passed
    assert "_copy x1" in verdict.message and "_k x1" in verdict.message


def test_a_first_call_may_launch_more_but_not_other_kernels(tmp_path):
    def setup_once(t):
        first = record({"_pack": 1, "_k": 1}) if t.first else record()
        return first, record() if t.first else None

    assert _judge(tmp_path, setup_once).passed

    def other_first(t):
        return (record({"_other": 1}) if t.first else record()), record() if t.first else None

    (tmp_path / "again").mkdir()
    verdict = _judge(tmp_path / "again", other_first)
    assert verdict.error_class == ErrorClass.LAUNCH_MISMATCH


def test_inputs_changed_are_seen_by_the_judge_whatever_the_worker_says(tmp_path):
    def inputs(t, args):
        if t.mode == "outlier" and t.trial == 1:
            args[0][0, 0] += 1.0
        return args

    verdict = _judge(tmp_path, inputs=inputs)
    assert verdict.error_class == ErrorClass.INPUT_MUTATED, verdict.message
    assert "mode outlier, trial 1" in verdict.message


def test_inputs_not_shipped_are_a_harness_verdict(tmp_path):
    verdict = _judge(tmp_path, inputs=lambda t, args: None)
    assert verdict.error_class == ErrorClass.HARNESS_ERROR and "did not ship" in verdict.message


def _timing(counts: dict[str, int], kernels: list[str], traced: list[m.FallbackInfo]):
    profile = m.StreamProfile(
        kernel_us={}, total_us=0.0, triton_us=0.0, triton_ratio=None, side_stream=False
    )
    return m.ShapeTiming(
        launches_per_call=1,
        launches_while_timed=sum(int(k) * n for k, n in counts.items()),
        calls_while_timed=sum(counts.values()),
        candidate_us=1.0,
        p20_us=1.0,
        p80_us=1.0,
        reps=10,
        method="events",
        side_stream=False,
        profile=profile,
        timed_launch_counts=counts,
        timed_kernels=kernels,
        traced_calls=traced,
    )


def _audited(timing: m.ShapeTiming) -> CallAudit:
    audit = CallAudit()
    audit.check("s", "trial 0", record())
    audit.check("s", "trial 0, repeat", record())
    audit.check_perf(m.CandidatePerf(launch_floor_us=None, shapes={"s": timing}))
    return audit


def test_timed_calls_must_launch_what_the_other_calls_launch():
    assert _audited(_timing({"1": 40}, ["_k"], [record()])).failure is None
    cached = _audited(_timing({"1": 1, "0": 39}, ["_k"], [record()])).failure
    assert cached is not None and cached.error == ErrorClass.LAUNCH_MISMATCH
    assert "while timed" in cached.message
    swapped = _audited(_timing({"1": 40}, ["_fast"], [record()])).failure
    assert swapped is not None and swapped.error == ErrorClass.LAUNCH_MISMATCH
    traced = _audited(_timing({"1": 40}, ["_k"], [record(all_ops={"mm": 1})])).failure
    assert traced is not None and traced.error == ErrorClass.FALLBACK


def test_a_repeat_shipped_as_a_digest_of_other_bytes_fails(tmp_path):
    """A worker that ships a repeat call's outputs as a digest says they are the first call's
    bytes; the judge checks that against the bytes it was shipped."""

    def forge(trial, header):
        if trial.first and trial.shape == SHAPES[1].name:
            assert header["repeat"]["t"] == "digest"
            d = header["repeat"]["d"]
            header["repeat"]["d"] = d[:-1] + ("1" if d[-1] == "0" else "0")

    verdict = _judge(tmp_path, forge=forge)
    assert verdict.error_class == ErrorClass.NONDETERMINISTIC, verdict.message
    assert "shipped as the first call's bytes" in verdict.message


def test_inputs_shipped_as_digests_of_other_bytes_are_a_mutation(tmp_path):
    def inputs(trial, args):
        if trial.mode == "outlier" and trial.trial == 1:
            args[0].view(-1)[0] += 1.0
        return args

    verdict = _judge(tmp_path, inputs=inputs)
    assert verdict.error_class == ErrorClass.INPUT_MUTATED, verdict.message
    assert "mode outlier, trial 1" in verdict.message


def test_a_compute_op_on_the_pipe_is_a_fallback_whatever_the_records_say(tmp_path):
    """The recorder's counts live in the candidate's process, which can clear them in place
    (tests/hostile/calls_clear_the_recorder.py); what its recorder wrote to the judge's op pipe
    stays written."""
    verdict = _judge(tmp_path, piped=(b"_softmax", b"launch:exp"))
    assert verdict.error_class == ErrorClass.FALLBACK, verdict.message
    assert "op pipe carried _softmax x1, launch:exp x1" in verdict.message
