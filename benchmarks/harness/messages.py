"""The judge <-> worker protocol: every message between the two processes, defined once.

    judge -> worker   request.json     one job: CandidateJob | BaselineJob | RemeasureJob |
                                       SweepJob
                                       (its kind under the key "job"; a candidate job's input
                                       seed is not in it)
                      inputs.json      InputsMessage: the candidate job's input seed, written
                                       only once the worker says ImportedEvent
                      go_perf / stop   empty files: the judge's answer to CorrectnessDoneEvent
    worker -> judge   progress.jsonl   one event per line: ReadyEvent, StartEvent, CallEvent, ...
                                       (its kind under the key "event", its clock under "t")
                      trial_<n>.json   one trial's outputs (format: benchmarks/harness/transport.py)
                      result.json      the job's result: CandidateResult | BaselineResult |
                                       RemeasureResult | SweepResult (which one follows from
                                       the job)

Each message is a dataclass and travels as plain, readable JSON: `dump` writes one, `parse_job`,
`parse_event` and `parse_result` read one back. A reader checks every field's type, refuses
unknown fields and unknown kinds, and says what was wrong in a `MessageError` that names the
message and the field.

The worker shares its process with the candidate, and the candidate is hostile: it can write
any of these files, or patch the worker's code that writes them. The judge therefore believes
nothing it reads here until it has parsed it, and turns a `MessageError` into a harness verdict,
never a crash.

Like the worker, this module imports only the standard library: the worker imports it on the GPU
machine, which has none of our other dependencies.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar, TypeVar

OPS_FD_ENV = (
    "KERNFORGE_OPS_FD"  # the op pipe's write end in a worker (benchmarks/harness/fallback.py)
)
PROTOCOL_VERSION = 2  # 2: every call traced, inputs shipped after the call

# The error classes a worker may report (a subset of `benchmarks.verdict.ErrorClass`, which this
# module cannot import); "" for a result that is not an error.
WORKER_ERROR_CLASSES = (
    "",
    "import_error",
    "compile_error",
    "parameter_mismatch",
    "runtime_error",
    "crash",
    "early_exit",
    "resource_limit",
    "harness_error",
    "fallback",  # a call stopped for reading too many elements into Python (probes.ReadCapExceeded)
    "trace_evaded",  # a call or the import stopped for reaching memory by address (probes)
    "wrong_output_type",  # what a call returned could not be read to be shipped (meta tensors)
)


class MessageError(ValueError):
    """A message that is not valid JSON, or not the record it claims to be."""


# --------------------------------------------------------------------------------------------
# shared parts
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShapeSpec:
    """A shape of the task by name, with its sizes (the judge's `Shape` without its weights)."""

    name: str
    dims: dict[str, int]
    timed: bool = True  # False: checked for correctness only, never timed (a ragged GPU shape)
    # True: also timed as served, many calls captured into one CUDA graph (decode shapes;
    # benchmarks/harness/graph_timing.py)
    graph: bool = False


@dataclass(frozen=True)
class Trial:
    """One correctness trial of the plan both sides derive (`worker.trial_plan`)."""

    n: int  # its number in the plan
    shape: str
    dims: dict[str, int]
    mode: str  # input mode: "standard", "outlier", ...
    trial: int  # its number among the trials of (shape, mode)
    seed: int
    first: bool  # the first standard trial of its shape: ops traced, call repeated

    def where(self) -> str:
        """'shape NAME DIMS, mode MODE, trial T', for messages."""
        return f"shape {self.shape} {self.dims}, mode {self.mode}, trial {self.trial}"


@dataclass(frozen=True)
class FallbackInfo:
    """What one traced call did besides Triton: aten ops that computed, all aten ops, Triton
    launches by kernel, and outputs no Triton kernel wrote; then what the in-process probes saw
    (`benchmarks.harness.probes`): aten ops inside Triton launches, tensor elements read into
    Python and built from Python data, new native threads, and what hid work from the tracers.
    The judge classifies `all_ops` and `launch_ops` itself (`benchmarks.harness.calls`)."""

    compute_ops: dict[str, int]
    all_ops: dict[str, int]
    launches: dict[str, int]
    output_problems: list[str]
    launch_ops: dict[str, int] = field(default_factory=dict)
    scalar_reads: int = 0
    python_elements: int = 0
    native_threads: int = 0
    evasions: list[str] = field(default_factory=list)
    # elements PyTorch copy ops wrote (clone, contiguous, copy_, casts), and the outputs' elements
    copied: int = 0
    quantized: int = 0  # elements PyTorch cast from floating point to fp8 or an integer type
    out_elements: int = 0


# --------------------------------------------------------------------------------------------
# jobs: judge -> worker
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CandidateJob:
    """Run every correctness trial of an untrusted candidate, then time it if asked."""

    kind: ClassVar[str] = "candidate"
    task_path: str
    dtype: str
    candidate_path: str
    device: str
    shapes: list[ShapeSpec]
    modes: list[str]
    trials: int  # per mode and shape
    # the input seed: None in request.json; the worker learns it from inputs.json once the
    # candidate is imported, so import-time code cannot compute the trials' answers ahead
    seed: int | None
    perf: bool  # time it after correctness (when the judge answers go_perf)
    handshake_timeout_s: float = 600.0  # how long to wait for the judge's go_perf / stop


@dataclass(frozen=True)
class InputsMessage:
    """inputs.json: the seed every input of a candidate job is drawn from."""

    seed: int


@dataclass(frozen=True)
class BaselineJob:
    """Time the task's own reference, eager and under torch.compile (trusted code)."""

    kind: ClassVar[str] = "baseline"
    task_path: str
    dtype: str
    device: str
    shapes: list[ShapeSpec]
    seed: int


@dataclass(frozen=True)
class RemeasureJob:
    """Time two already-correct kernels interleaved, incumbent candidate candidate incumbent."""

    kind: ClassVar[str] = "remeasure"
    task_path: str
    dtype: str
    device: str
    incumbent_path: str
    candidate_path: str
    shapes: list[ShapeSpec]
    rounds: int
    seed: int


@dataclass(frozen=True)
class SweepJob:
    """Time many configurations of one kernel, one after another, in this one process (for a
    ranking only: the process runs candidate code, so nothing it says decides a verdict). Each
    configuration is called once untimed (compile), its output compared with the reference's on
    the same inputs, then timed briefly; one that fails is recorded and the next one runs."""

    kind: ClassVar[str] = "sweep"
    task_path: str
    dtype: str
    device: str
    config_paths: list[str]  # one module per configuration, in the order the result names them
    shapes: list[ShapeSpec]
    seed: int
    warmup_ms: float
    rep_ms: float
    max_reps: int


Job = CandidateJob | BaselineJob | RemeasureJob | SweepJob
JOBS: dict[str, type] = {
    cls.kind: cls for cls in (CandidateJob, BaselineJob, RemeasureJob, SweepJob)
}


# --------------------------------------------------------------------------------------------
# events: worker -> judge, one progress line each
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Event:
    """A progress line; `t` is the worker's clock (time.perf_counter) when it was written."""

    kind: ClassVar[str] = ""
    t: float = 0.0


@dataclass(frozen=True, kw_only=True)
class ReadyEvent(Event):
    """The worker has imported everything and waits for its job."""

    kind: ClassVar[str] = "ready"


@dataclass(frozen=True, kw_only=True)
class StartEvent(Event):
    """The worker read its job."""

    kind: ClassVar[str] = "start"
    pid: int
    protocol: int


@dataclass(frozen=True, kw_only=True)
class ImportEvent(Event):
    """Importing a candidate starts (`which`: "incumbent" or "candidate" in a remeasure job)."""

    kind: ClassVar[str] = "import"
    which: str | None = None


@dataclass(frozen=True, kw_only=True)
class ImportedEvent(Event):
    """The candidate is imported; the worker now waits for inputs.json."""

    kind: ClassVar[str] = "imported"


@dataclass(frozen=True, kw_only=True)
class CallEvent(Event):
    """Trial `n` starts."""

    kind: ClassVar[str] = "call"
    n: int
    shape: str
    mode: str
    trial: int


@dataclass(frozen=True, kw_only=True)
class FirstInputsEvent(Event):
    """The first trial's inputs are made."""

    kind: ClassVar[str] = "first_inputs"


@dataclass(frozen=True, kw_only=True)
class FirstCalledEvent(Event):
    """The first trial's call returned."""

    kind: ClassVar[str] = "first_called"


@dataclass(frozen=True, kw_only=True)
class FirstRepeatedEvent(Event):
    """The first trial's repeat call returned."""

    kind: ClassVar[str] = "first_repeated"


@dataclass(frozen=True, kw_only=True)
class TrialEvent(Event):
    """Trial `n`'s outputs (and its inputs after the call) are in `file` (always
    trial_<n>.json); the record of its call, and of the repeat call on a shape's first trial."""

    kind: ClassVar[str] = "trial"
    n: int
    file: str
    call_s: float
    fallback: FallbackInfo | None = None
    repeat_fallback: FallbackInfo | None = None


@dataclass(frozen=True, kw_only=True)
class CorrectnessDoneEvent(Event):
    """Every trial ran; the worker now waits for go_perf or stop."""

    kind: ClassVar[str] = "correctness_done"


@dataclass(frozen=True, kw_only=True)
class PerfEvent(Event):
    """Timing of `shape` starts (round `round` in a remeasure job; `graph`: inside a CUDA
    graph)."""

    kind: ClassVar[str] = "perf"
    shape: str
    round: int | None = None
    graph: bool = False


@dataclass(frozen=True, kw_only=True)
class PeaksEvent(Event):
    """A baseline job looks up the device's peaks."""

    kind: ClassVar[str] = "peaks"


@dataclass(frozen=True, kw_only=True)
class BaselineEvent(Event):
    """A baseline job times `shape`."""

    kind: ClassVar[str] = "baseline"
    shape: str


@dataclass(frozen=True, kw_only=True)
class DoneEvent(Event):
    """result.json is written."""

    kind: ClassVar[str] = "done"


@dataclass(frozen=True, kw_only=True)
class MalformedEvent(Event):
    """Not a message: what the judge's reader puts where a progress line failed to parse."""

    kind: ClassVar[str] = "malformed"
    raw: str
    error: str


EVENTS: dict[str, type] = {
    cls.kind: cls
    for cls in (
        ReadyEvent,
        StartEvent,
        ImportEvent,
        ImportedEvent,
        CallEvent,
        FirstInputsEvent,
        FirstCalledEvent,
        FirstRepeatedEvent,
        TrialEvent,
        CorrectnessDoneEvent,
        PerfEvent,
        PeaksEvent,
        BaselineEvent,
        DoneEvent,
    )
}


# --------------------------------------------------------------------------------------------
# results: worker -> judge, result.json
# --------------------------------------------------------------------------------------------


@dataclass
class JobResult:
    """What every result says: "ok", or "error" with an error class and a message."""

    status: str = field(default="ok", metadata={"choices": ("ok", "error")})
    error_class: str = field(default="", metadata={"choices": WORKER_ERROR_CLASSES})
    message: str = ""
    traceback: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "error"

    def fail(self, error_class: str, message: str, traceback: str = "") -> None:
        """Mark this result an error (what it gathered before stays)."""
        self.status, self.error_class = "error", error_class
        self.message, self.traceback = message, traceback


@dataclass(frozen=True)
class StreamProfile:
    """One call under torch.profiler: device time per kernel, the Triton share, side streams."""

    kernel_us: dict[str, float]
    total_us: float
    triton_us: float
    triton_ratio: float | None
    side_stream: bool
    note: str = ""  # why the numbers are empty ("profiler saw no kernels")


@dataclass(frozen=True)
class GraphTiming:
    """One shape timed as served (benchmarks/harness/graph_timing.py): `calls` calls, each on
    its own copy of the inputs, captured into one CUDA graph and replayed; `graph_us` is the
    median replay time divided by `calls`. `error` says why there is no time ("" when timed)."""

    calls: int = 0
    launches: int = 0  # Triton launches seen while the calls were captured
    kernels: list[str] = field(default_factory=list)  # the kernels they launched
    traced: FallbackInfo | None = None  # the capture, traced like a call (all `calls` of it)
    graph_us: float | None = None
    p20_us: float | None = None
    p80_us: float | None = None
    reps: int = 0
    # the graph replayed once more after the timing inputs were changed a second time: its trial
    # file (the judge checks the answer of the first copy); "" when none was written
    after_file: str = ""
    error: str = ""


@dataclass(frozen=True)
class ShapeTiming:
    """The candidate's time on one shape, with the launch counts that check the timing."""

    launches_per_call: int
    launches_while_timed: int
    calls_while_timed: int
    candidate_us: float
    p20_us: float
    p80_us: float
    reps: int
    method: str
    side_stream: bool
    profile: StreamProfile
    # every timed call's Triton launches: {launches in one call: number of such calls}, the
    # kernels launched while timed, and the traced calls on the timing inputs (compile, profile)
    timed_launch_counts: dict[str, int] = field(default_factory=dict)
    timed_kernels: list[str] = field(default_factory=list)
    traced_calls: list[FallbackInfo] = field(default_factory=list)
    # the call after timing on the timing inputs with one element changed
    # (benchmarks.harness.after_timing): its trial file in the worker's folder, "" if none
    after_file: str = ""
    # the shape timed inside a CUDA graph as well (ShapeSpec.graph), or None
    graph: GraphTiming | None = None


@dataclass(frozen=True)
class CandidatePerf:
    """The candidate's timings: the launch floor and one entry per shape."""

    launch_floor_us: float | None
    shapes: dict[str, ShapeTiming]

    def by_shape_dict(self) -> dict[str, Any]:
        """The form `benchmarks.harness.perf.fill_perf` reads: launch_floor_us beside one
        entry per shape name."""
        out: dict[str, Any] = {"launch_floor_us": self.launch_floor_us}
        out.update({name: dataclasses.asdict(t) for name, t in self.shapes.items()})
        return out


@dataclass
class CandidateResult(JobResult):
    """A candidate job's result: traced ops per shape, Triton launches, PTX features, timings.

    An error with `where` set failed during that correctness trial; an error after every trial
    was shipped failed while timing."""

    fallback: dict[str, FallbackInfo] = field(default_factory=dict)
    launches_total: dict[str, int] = field(default_factory=dict)
    ptx_features: dict[str, bool] | None = None
    perf: CandidatePerf | None = None
    perf_skipped: str = ""
    where: Trial | None = None


@dataclass(frozen=True)
class BaselineTimes:
    """The reference's eager and torch.compile times on one shape."""

    eager_us: float
    compile_us: float | None
    compile_error: str = ""
    # per call inside a CUDA graph (decode shapes, ShapeSpec.graph), None where not asked or
    # the capture failed (why: graph_error)
    eager_graph_us: float | None = None
    compile_graph_us: float | None = None
    graph_error: str = ""


@dataclass
class BaselineResult(JobResult):
    """A baseline job's result: times per shape, the device peaks, the launch floor."""

    shapes: dict[str, BaselineTimes] = field(default_factory=dict)
    peaks: dict[str, Any] | None = None
    launch_floor_us: float | None = None


@dataclass
class RemeasureResult(JobResult):
    """A remeasure job's result: {"incumbent"|"candidate": {shape: [microseconds, ...]}}."""

    times: dict[str, dict[str, list[float]]] = field(default_factory=dict)


@dataclass(frozen=True)
class SweepTiming:
    """One configuration of a sweep job: its median time per shape (microseconds), or why it
    failed ("" when it did not). `index` is its position in the job's `config_paths`."""

    index: int
    times_us: dict[str, float] = field(default_factory=dict)
    error: str = ""
    seconds: float = 0.0  # the worker's wall time on this configuration (import to last timing)
    compiled: int = 0  # kernels Triton compiled in the worker for it (not found compiled ahead)
    # where its seconds went: load (import, bind), first_call (compile or load, run), check, time;
    # first_call:<shape> is each shape's own share of first_call
    phases: dict[str, float] = field(default_factory=dict)


@dataclass
class SweepResult(JobResult):
    """A sweep job's result: one entry per configuration it reached, in order. An error result
    (the CUDA context broke, say) keeps the entries measured before it."""

    entries: list[SweepTiming] = field(default_factory=list)


Result = CandidateResult | BaselineResult | RemeasureResult | SweepResult
RESULTS: dict[str, type] = {
    CandidateJob.kind: CandidateResult,
    BaselineJob.kind: BaselineResult,
    RemeasureJob.kind: RemeasureResult,
    SweepJob.kind: SweepResult,
}


def result_type(job: Job) -> type:
    """The result record a job answers with."""
    return RESULTS[job.kind]


# --------------------------------------------------------------------------------------------
# to and from JSON
# --------------------------------------------------------------------------------------------


def to_dict(message: Any) -> dict[str, Any]:
    """A message as a JSON-ready dict: a job or event with its kind first, then its fields."""
    body = dataclasses.asdict(message)
    if isinstance(message, Event):
        return {"event": message.kind, **body}
    if isinstance(message, CandidateJob | BaselineJob | RemeasureJob | SweepJob):
        return {"job": message.kind, **body}
    return body


def dump(message: Any) -> str:
    """A message as one line of JSON (a value JSON cannot hold is written as its str)."""
    return json.dumps(to_dict(message), default=str)


def parse_job(text: str | bytes) -> Job:
    """The job in `text` (request.json)."""
    data = _load(text, "job")
    kind = data.pop("job", None)
    if not isinstance(kind, str) or kind not in JOBS:
        raise MessageError(f"job: unknown kind {_clip(kind)} (known: {', '.join(JOBS)})")
    return _record(JOBS[kind], data, f"{kind} job")


def parse_event(text: str | bytes) -> Event:
    """The event in one progress line."""
    data = _load(text, "progress line")
    kind = data.pop("event", None)
    if not isinstance(kind, str) or kind not in EVENTS:
        raise MessageError(
            f"progress line: unknown event {_clip(kind)} (known: {', '.join(EVENTS)})"
        )
    return _record(EVENTS[kind], data, f"{kind} event")


def parse_inputs(text: str | bytes) -> InputsMessage:
    """The input seed in `text` (inputs.json)."""
    return _record(InputsMessage, _load(text, "inputs.json"), "inputs.json")


R = TypeVar("R")


def parse_result(cls: type[R], text: str | bytes) -> R:
    """The result of class `cls` in `text` (result.json)."""
    name = f"{cls.__name__} (result.json)"
    return _record(cls, _load(text, name), name)


def _load(text: str | bytes, what: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise MessageError(f"{what}: not valid JSON ({type(exc).__name__}: {exc})") from None
    if not isinstance(data, dict):
        raise MessageError(f"{what}: a JSON {type(data).__name__}, not an object")
    return data


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _record(cls: type[R], data: Any, where: str) -> R:
    if not isinstance(data, dict):
        raise MessageError(f"{where}: expected an object, got {_show(data)}")
    known = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise MessageError(f"{where}: unknown field(s) {', '.join(unknown)[:200]}")
    hints = _hints(cls)
    values = {}
    for name, f in known.items():
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise MessageError(f"{where}: missing field {name!r}")
            continue
        value = _value(hints[name], data[name], f"{where}, field {name!r}")
        choices = f.metadata.get("choices")
        if choices is not None and value not in choices:
            raise MessageError(
                f"{where}, field {name!r}: {_show(value)} is not one of {', '.join(map(repr, choices))}"
            )
        values[name] = value
    return cls(**values)


def _value(tp: Any, value: Any, where: str) -> Any:
    """`value` checked against the type `tp` (and converted: int -> float, objects -> records)."""
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]  # only `X | None` is used here
        return _value(inner, value, where)
    if origin is list:
        if not isinstance(value, list):
            raise MessageError(f"{where}: expected a list, got {_show(value)}")
        (item,) = typing.get_args(tp)
        return [_value(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise MessageError(f"{where}: expected an object, got {_show(value)}")
        _, item = typing.get_args(tp)
        return {k: _value(item, v, f"{where}[{k!r}]") for k, v in value.items()}
    if dataclasses.is_dataclass(tp):
        return _record(tp, value, where)  # type: ignore[arg-type]
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif tp is str:
        if isinstance(value, str):
            return value
    else:
        raise TypeError(f"messages: no reader for type {tp!r}")  # a bug in this module
    raise MessageError(f"{where}: expected {tp.__name__}, got {_show(value)}")


def _show(value: Any) -> str:
    """A short description of a value from the wire, for error messages: its type and repr."""
    return f"{type(value).__name__} {_clip(value)}"


def _clip(value: Any) -> str:
    """The repr of a value from the wire, cut to a readable length."""
    text = repr(value)
    return text[:60] + ("..." if len(text) > 60 else "")
