"""The verdict: the one record every evaluation ends in.

The agent, the bench, the reports and the error->fix data set all read this record and nothing
else, so it is defined once, here. It is plain pydantic and round-trips through JSON.

A verdict walks the stages in order and stops at the first that fails:

    static -> compile -> call -> correct_standard -> correct_outlier
           -> deterministic -> no_fallback -> perf

`stage_reached` is the last stage that passed (None when even the static check failed);
`error_class` names why the next one failed, from a fixed taxonomy (`ErrorClass`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class Stage(StrEnum):
    STATIC = "static"
    COMPILE = "compile"
    CALL = "call"
    CORRECT_STANDARD = "correct_standard"
    CORRECT_OUTLIER = "correct_outlier"
    DETERMINISTIC = "deterministic"
    NO_FALLBACK = "no_fallback"
    PERF = "perf"


STAGE_ORDER: tuple[Stage, ...] = tuple(Stage)


class ErrorClass(StrEnum):
    NONE = "none"
    # static
    SYNTAX_ERROR = "syntax_error"
    MISSING_ENTRY_POINT = "missing_entry_point"
    SIGNATURE_MISMATCH = "signature_mismatch"
    NO_TRITON_KERNEL = "no_triton_kernel"
    FORBIDDEN_API = "forbidden_api"
    # compile / call (in the child process)
    IMPORT_ERROR = "import_error"
    COMPILE_ERROR = "compile_error"
    PARAMETER_MISMATCH = "parameter_mismatch"  # a class entry's weights are not the reference's
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    CRASH = "crash"
    EARLY_EXIT = "early_exit"
    # the candidate's processes crossed a limit the judge watches or the OS enforces: memory,
    # process count, disk (folder, sandbox tmpfs), file size, CPU time (benchmarks/harness/watchdog.py)
    RESOURCE_LIMIT = "resource_limit"
    # correctness
    WRONG_OUTPUT_TYPE = "wrong_output_type"
    SHAPE_MISMATCH = "shape_mismatch"
    DTYPE_MISMATCH = "dtype_mismatch"
    NUMERICAL_MISMATCH = "numerical_mismatch"
    NAN_INF_MISMATCH = "nan_inf_mismatch"
    INPUT_MUTATED = "input_mutated"
    NONDETERMINISTIC = "nondeterministic"
    # fallback / perf
    FALLBACK = "fallback"
    # one call launched other Triton kernels (or another number of them) than the other calls
    # of its shape, the timed calls included
    LAUNCH_MISMATCH = "launch_mismatch"
    # the call hid work from the judge's tracers: dispatch recorder off, another thread, the
    # worker's checks patched (benchmarks/harness/probes.py)
    TRACE_EVADED = "trace_evaded"
    IMPOSSIBLE_TIME = "impossible_time"
    # ours, not the candidate's
    HARNESS_ERROR = "harness_error"


# Which stage an error class stops. Used to fill `stage_reached` consistently.
FAILS_STAGE: dict[ErrorClass, Stage] = {
    ErrorClass.SYNTAX_ERROR: Stage.STATIC,
    ErrorClass.MISSING_ENTRY_POINT: Stage.STATIC,
    ErrorClass.SIGNATURE_MISMATCH: Stage.STATIC,
    ErrorClass.NO_TRITON_KERNEL: Stage.STATIC,
    ErrorClass.FORBIDDEN_API: Stage.STATIC,
    ErrorClass.IMPORT_ERROR: Stage.COMPILE,
    ErrorClass.COMPILE_ERROR: Stage.COMPILE,
    ErrorClass.PARAMETER_MISMATCH: Stage.COMPILE,
    ErrorClass.RUNTIME_ERROR: Stage.CALL,
    ErrorClass.TIMEOUT: Stage.CALL,
    ErrorClass.CRASH: Stage.CALL,
    ErrorClass.EARLY_EXIT: Stage.CALL,
    ErrorClass.RESOURCE_LIMIT: Stage.CALL,
    ErrorClass.WRONG_OUTPUT_TYPE: Stage.CORRECT_STANDARD,
    ErrorClass.SHAPE_MISMATCH: Stage.CORRECT_STANDARD,
    ErrorClass.DTYPE_MISMATCH: Stage.CORRECT_STANDARD,
    ErrorClass.NUMERICAL_MISMATCH: Stage.CORRECT_STANDARD,
    ErrorClass.NAN_INF_MISMATCH: Stage.CORRECT_STANDARD,
    ErrorClass.INPUT_MUTATED: Stage.CORRECT_STANDARD,
    ErrorClass.NONDETERMINISTIC: Stage.DETERMINISTIC,
    ErrorClass.FALLBACK: Stage.NO_FALLBACK,
    ErrorClass.LAUNCH_MISMATCH: Stage.NO_FALLBACK,
    ErrorClass.TRACE_EVADED: Stage.NO_FALLBACK,
    ErrorClass.IMPOSSIBLE_TIME: Stage.PERF,
}


class Mismatch(BaseModel):
    """Where and how far an output left its tolerance."""

    output_index: int = 0
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    first_bad_index: list[int] | None = None
    expected: float | None = None
    got: float | None = None
    # quantization contracts
    cosine: float | None = None
    rel_l1: float | None = None
    rmse: float | None = None
    detail: str = ""


class UncheckedShape(BaseModel):
    """A shape, or a part of one, that an evaluation did not check, and why (a declared shape
    not selected or not run on this device, a dim kept at its declared value)."""

    shape: str  # the declared (or derived) shape's name
    dims: dict[str, int] = Field(default_factory=dict)  # its declared dims
    reason: str = ""


class BaselineOrigin(BaseModel):
    """Where one shape's baseline times (eager, torch.compile) came from: measured for this
    evaluation, or reused from this judging process's memory or from the disk cache
    (benchmarks/harness/baselines.py), and when they were measured."""

    source: str  # "measured", "memory" or "disk"
    measured_at: str = ""  # ISO 8601, UTC
    key: str = ""  # the cache entry's key

    @property
    def reused(self) -> bool:
        return self.source != "measured"


class ShapeResult(BaseModel):
    """Numbers for one shape of one task at one dtype."""

    shape: str
    dims: dict[str, int]
    dtype: str
    weight: float = 1.0
    phase: str = "prefill"
    # the declared shape this one was drawn (CPU) or derived (GPU ragged) from; "" = itself
    derived_from: str = ""
    # checked for correctness only: never timed, never in the score (the GPU's ragged shape)
    correctness_only: bool = False
    # correctness (worst over trials and modes)
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    cosine: float | None = None
    rel_l1: float | None = None
    rmse: float | None = None
    # timing, microseconds (None = not measured): the times the speedups, the roofline fields
    # and the score use, taken the way `timing` says
    candidate_us: float | None = None
    eager_us: float | None = None
    compile_us: float | None = None
    # "call": each call timed on its own (every shape); "graph": per call of many captured into
    # one CUDA graph and replayed, as decode is served (benchmarks/harness/graph_timing.py),
    # used where the candidate, eager and torch.compile all have that figure
    timing: str = "call"
    # both figures, whichever the score uses (None where not taken; graph: decode shapes only)
    call_us: float | None = None
    eager_call_us: float | None = None
    compile_call_us: float | None = None
    graph_us: float | None = None
    eager_graph_us: float | None = None
    compile_graph_us: float | None = None
    # where eager_us and compile_us came from; None where no baseline was taken (no GPU) and in
    # verdicts written before baselines were cached
    baseline: BaselineOrigin | None = None
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    # roofline
    flops: float | None = None
    bytes: float | None = None
    roofline_us: float | None = None
    attainment: float | None = None
    iou: float | None = None
    mfu: float | None = None
    launch_bound: bool | None = None
    # the profiler's share of one call's GPU time in Triton kernels; None under the launch
    # observer (CUPTI takes one subscriber a process: its counts judge instead)
    triton_ratio: float | None = None
    timing_method: str | None = None
    notes: list[str] = Field(default_factory=list)


class Verdict(BaseModel):
    """One evaluation of one candidate on one task."""

    task_id: str
    candidate: str = ""  # path or label
    candidate_sha256: str = ""
    device: str = "cpu"  # "cpu" (Triton interpreter) or "cuda"
    passed: bool = False  # every correctness stage passed (perf may be "not measured")
    stage_reached: Stage | None = None
    error_class: ErrorClass = ErrorClass.NONE
    message: str = ""
    mismatch: Mismatch | None = None
    shapes: list[ShapeResult] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)  # checks not made here, with the reason
    notes: list[str] = Field(default_factory=list)  # how it was run: shrunk sizes, estimated costs
    perf_status: str = "not measured"
    geomean_speedup_eager: float | None = None
    geomean_speedup_compile: float | None = None
    score: float | None = None  # per-task S: median roofline attainment over shapes
    fallback_ops: list[str] = Field(default_factory=list)
    aten_ops: dict[str, int] = Field(default_factory=dict)
    triton_launches: dict[str, int] = Field(default_factory=dict)
    triton_ratio: float | None = None
    flags: list[str] = Field(default_factory=list)  # e.g. "side_stream", "impossible_time"
    # hardware features in the PTX of the Triton kernels the candidate launched (benchmarks/harness/ptx.py);
    # None where no PTX exists (the CPU interpreter) or none was captured: "not measured"
    ptx_features: dict[str, bool] | None = None
    stage_seconds: dict[str, float] = Field(default_factory=dict)
    fingerprint: dict[str, Any] = Field(default_factory=dict)
    trials: int = 0
    seed: int = 0
    # the OS isolation the candidate's process ran under (benchmarks/harness/sandbox.py): "bwrap"
    # or "none"; "" in verdicts written before isolation was recorded
    isolation: str = ""
    # whether the candidate's GPU launches were counted from outside its Python (the CUPTI
    # launch observer, benchmarks/harness/observer), and what it saw: "" where not recorded
    launch_observation: str = ""
    # the seed the CPU shapes were drawn with (benchmarks/harness/shapes.py; JudgeConfig.shape_seed
    # reproduces them); None on the GPU and in verdicts written before shapes were drawn
    shape_seed: int | None = None
    # every shape the evaluation was to check, name -> dims (drawn and derived ones included);
    # `shapes` holds the results of those it reached
    shape_plan: dict[str, dict[str, int]] = Field(default_factory=dict)
    # shapes, or dims of them, not checked, and why
    unchecked_shapes: list[UncheckedShape] = Field(default_factory=list)

    def failed_at(self) -> Stage | None:
        """The stage that failed, or None when the candidate passed everything it was asked."""
        if self.error_class == ErrorClass.NONE:
            return None
        return FAILS_STAGE.get(self.error_class)

    def summary_line(self) -> str:
        status = "PASS" if self.passed else f"FAIL ({self.error_class.value})"
        reached = self.stage_reached.value if self.stage_reached else "nothing"
        return f"{self.task_id}: {status}; reached {reached}. {self.message}".strip()


def stage_before(stage: Stage) -> Stage | None:
    """The stage that must have passed for `stage` to be attempted."""
    i = STAGE_ORDER.index(stage)
    return STAGE_ORDER[i - 1] if i > 0 else None
