"""The judge <-> worker messages (benchmarks/harness/messages.py): each kind round-trips through its
JSON form, and a malformed message is refused with a MessageError that says what was wrong."""

import dataclasses
import json

import pytest

from benchmarks.harness import messages as m
from benchmarks.verdict import ErrorClass

SHAPES = [m.ShapeSpec(name="small", dims={"M": 4, "N": 33})]
TRIAL = m.Trial(
    n=3, shape="small", dims={"M": 4, "N": 33}, mode="outlier", trial=1, seed=7, first=False
)
FALLBACK = m.FallbackInfo(
    compute_ops={"aten::exp": 2},
    all_ops={"aten::empty_like": 1},
    launches={"_k": 1},
    output_problems=[],
)
PROFILE = m.StreamProfile(
    kernel_us={"_k": 3.5}, total_us=3.5, triton_us=3.5, triton_ratio=1.0, side_stream=False
)
TIMING = m.ShapeTiming(
    launches_per_call=1,
    launches_while_timed=100,
    calls_while_timed=100,
    candidate_us=3.25,
    p20_us=3.0,
    p80_us=3.5,
    reps=100,
    method="cuda_events",
    side_stream=False,
    profile=PROFILE,
)

JOBS = [
    m.CandidateJob(
        task_path="/t/softmax.py",
        dtype="fp32",
        candidate_path="/w/candidate.py",
        device="cpu",
        shapes=SHAPES,
        modes=["standard", "outlier"],
        trials=2,
        seed=0,
        perf=False,
    ),
    m.BaselineJob(task_path="/t/softmax.py", dtype="fp32", device="cuda", shapes=SHAPES, seed=1),
    m.RemeasureJob(
        task_path="/t/softmax.py",
        dtype="fp32",
        device="cuda",
        incumbent_path="{folder}/incumbent.py",
        candidate_path="{folder}/candidate.py",
        shapes=SHAPES,
        rounds=2,
        seed=0,
    ),
    m.SweepJob(
        task_path="/t/softmax.py",
        dtype="fp32",
        device="cuda",
        config_paths=["{folder}/cfg_0.py", "{folder}/cfg_3.py"],
        shapes=SHAPES,
        seed=5,
        warmup_ms=5.0,
        rep_ms=20.0,
        max_reps=100,
    ),
]

EVENTS = [
    m.ReadyEvent(t=1.0),
    m.StartEvent(t=1.5, pid=42, protocol=m.PROTOCOL_VERSION),
    m.ImportEvent(t=2.0),
    m.ImportEvent(t=2.0, which="incumbent"),
    m.ImportedEvent(t=2.5),
    m.CallEvent(t=3.0, n=0, shape="small", mode="standard", trial=0),
    m.FirstInputsEvent(t=3.1),
    m.FirstCalledEvent(t=3.2),
    m.FirstRepeatedEvent(t=3.3),
    m.TrialEvent(t=3.4, n=0, file="trial_0.json", call_s=0.25, fallback=FALLBACK),
    m.TrialEvent(t=3.5, n=1, file="trial_1.json", call_s=0.125),
    m.CorrectnessDoneEvent(t=4.0),
    m.PerfEvent(t=5.0, shape="small"),
    m.PerfEvent(t=5.0, shape="small", round=1),
    m.PeaksEvent(t=5.5),
    m.BaselineEvent(t=6.0, shape="small"),
    m.DoneEvent(t=7.0),
]

RESULTS = [
    m.CandidateResult(
        fallback={"small": FALLBACK},
        launches_total={"_k": 12},
        ptx_features={"tensor_cores": False},
        perf=m.CandidatePerf(launch_floor_us=2.5, shapes={"small": TIMING}),
    ),
    m.CandidateResult(
        status="error",
        error_class="runtime_error",
        message="the call raised",
        traceback="Traceback ...",
        where=TRIAL,
    ),
    m.CandidateResult(perf_skipped="judge did not ask for performance"),
    m.BaselineResult(
        shapes={
            "small": m.BaselineTimes(eager_us=9.0, compile_us=None, compile_error="Boom: no"),
            "big": m.BaselineTimes(eager_us=90.0, compile_us=45.0),
        },
        peaks={"name": "H200", "dram_bytes_per_s": 4.8e12},
        launch_floor_us=2.5,
    ),
    m.RemeasureResult(
        times={"incumbent": {"small": [10.0, 10.5]}, "candidate": {"small": [8.0, 8.25]}}
    ),
    m.RemeasureResult(
        status="error", error_class="import_error", message="importing the incumbent failed"
    ),
    m.SweepResult(
        entries=[
            m.SweepTiming(index=0, times_us={"small": 3.5}),
            m.SweepTiming(index=1, error="shape small: output 0: off by up to 2"),
        ]
    ),
    m.SweepResult(
        status="error",
        error_class="crash",
        message="the CUDA context broke at configuration 1",
        entries=[m.SweepTiming(index=0, times_us={"small": 3.5})],
    ),
]


def _id(msg: object) -> str:
    return type(msg).__name__


@pytest.mark.parametrize("job", JOBS, ids=_id)
def test_each_job_round_trips_as_readable_json(job):
    text = m.dump(job)
    assert json.loads(text)["job"] == job.kind  # the kind is on the wire, in plain JSON
    assert m.parse_job(text) == job


@pytest.mark.parametrize("event", EVENTS, ids=_id)
def test_each_event_round_trips_as_readable_json(event):
    text = m.dump(event)
    data = json.loads(text)
    assert data["event"] == event.kind and data["t"] == event.t
    assert m.parse_event(text) == event


@pytest.mark.parametrize("result", RESULTS, ids=_id)
def test_each_result_round_trips_as_readable_json(result):
    assert m.parse_result(type(result), m.dump(result)) == result


def test_every_event_kind_is_covered_above():
    assert {type(e) for e in EVENTS} == set(m.EVENTS.values())
    assert {type(j) for j in JOBS} == set(m.JOBS.values())
    assert {type(r) for r in RESULTS} == set(m.RESULTS.values())


def test_the_input_seed_travels_apart_from_the_job():
    """request.json carries a candidate job without its seed; inputs.json carries the seed."""
    assert m.parse_inputs(m.dump(m.InputsMessage(seed=12345))) == m.InputsMessage(seed=12345)
    for bad, says in [('{"seed": "7"}', "seed"), ("{}", "seed"), ("[1]", "not an object")]:
        with pytest.raises(m.MessageError, match=says):
            m.parse_inputs(bad)
    sealed = m.parse_job(m.dump(dataclasses.replace(JOBS[0], seed=None)))
    assert sealed.seed is None


def test_the_perf_form_the_perf_stage_reads():
    perf = m.CandidatePerf(launch_floor_us=2.5, shapes={"small": TIMING})
    flat = perf.by_shape_dict()
    assert flat["launch_floor_us"] == 2.5
    assert flat["small"]["candidate_us"] == 3.25 and flat["small"]["profile"]["triton_ratio"] == 1.0


def test_worker_error_classes_are_verdict_error_classes():
    assert set(m.WORKER_ERROR_CLASSES) - {""} <= {e.value for e in ErrorClass}


def _event_json(**fields):
    return json.dumps(
        {"event": "call", "t": 1.0, "n": 0, "shape": "s", "mode": "standard", "trial": 0, **fields}
    )


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (b"not json", "not valid JSON"),
        (b"\xff\xfe", "not valid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON"),  # nesting past the parser's depth
        (b"[1, 2]", "a JSON list, not an object"),
        (b'{"t": 1.0}', "unknown event None"),
        (b'{"event": ["call"], "t": 1.0}', "unknown event ['call']"),
        (b'{"event": "all_trials_passed", "t": 1.0}', "unknown event 'all_trials_passed'"),
        (b'{"event": "malformed", "t": 1.0, "raw": "", "error": ""}', "unknown event 'malformed'"),
        (_event_json(n="0").encode(), "call event, field 'n': expected int, got str '0'"),
        (_event_json(n=True).encode(), "field 'n': expected int, got bool"),
        (_event_json(trial=None).encode(), "field 'trial': expected int, got NoneType"),
        (_event_json(shell="rm -rf /").encode(), "unknown field(s) shell"),
        (b'{"event": "call", "t": 1.0, "n": 0}', "missing field 'shape'"),
        (
            b'{"event": "trial", "t": 1.0, "n": 0, "file": "trial_0.json", "call_s": 0.1, '
            b'"fallback": {"compute_ops": {"aten::exp": "many"}, "all_ops": {}, "launches": {}, '
            b'"output_problems": []}}',
            "field 'fallback', field 'compute_ops'['aten::exp']: expected int",
        ),
    ],
)
def test_a_malformed_event_is_refused_with_a_clear_error(line, says):
    with pytest.raises(m.MessageError) as err:
        m.parse_event(line)
    assert says in str(err.value)


def test_a_result_outside_the_protocol_is_refused():
    good = m.dump(RESULTS[0])
    with pytest.raises(m.MessageError, match="field 'status'.*not one of 'ok', 'error'"):
        m.parse_result(m.CandidateResult, good.replace('"status": "ok"', '"status": "passed"'))
    bad_class = m.dump(m.CandidateResult(status="error", error_class="harness_error"))
    with pytest.raises(m.MessageError, match="field 'error_class'"):
        m.parse_result(m.CandidateResult, bad_class.replace("harness_error", "none"))
    with pytest.raises(m.MessageError, match="field 'ptx_features'.*expected bool"):
        m.parse_result(m.CandidateResult, good.replace("false", '"no"'))


def test_an_unknown_job_is_refused():
    data = json.loads(m.dump(JOBS[0]))
    with pytest.raises(m.MessageError, match="unknown kind 'shell'"):
        m.parse_job(json.dumps({**data, "job": "shell"}))
    data.pop("trials")
    with pytest.raises(m.MessageError, match="candidate job: missing field 'trials'"):
        m.parse_job(json.dumps(data))


def test_numbers_from_the_wire_are_read_as_floats():
    event = m.parse_event(
        b'{"event": "trial", "t": 3, "n": 0, "file": "trial_0.json", "call_s": 1}'
    )
    assert isinstance(event.t, float) and isinstance(event.call_s, float)
    assert dataclasses.replace(event, t=3.0) == event
