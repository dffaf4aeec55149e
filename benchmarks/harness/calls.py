"""Every call checked, in the judge: the record of each call the worker made (every trial of
every mode, the repeat call, the calls on the timing inputs, and the launch counts of the timed
calls) is judged here, never in the candidate's process.

For each call, in this order (the first that fails is the verdict, at the no-fallback stage):

1. **PyTorch compute** (`fallback`): the judge classifies the recorded aten op names itself
   (`ALLOWED_ATEN_OPS`), outside Triton launches and inside them (under the interpreter a
   kernel body is Python and may call PyTorch); the worker's own classification is not read;
2. **Python compute** (`fallback`): more than `PYTHON_ELEMENT_LIMIT` tensor elements read into
   Python values or built from Python data during one call;
3. **hidden work** (`trace_evaded`): the worker's probes (`benchmarks.harness.probes`) saw the
   dispatch recorder switched off, a thread started, or the worker's own code replaced;
4. **outputs no Triton kernel wrote, or no launch at all** (`fallback`), except that a call
   whose reference result has no elements (an empty input; the judge computes the reference
   itself) may launch nothing: there is nothing to compute;
5. **the same kernels every call** (`launch_mismatch`): per shape, every call after the first
   launches exactly the kernels (and counts) of the second; the first may launch more (one-time
   set-up such as packing weights) but not other ones. The timed calls on a GPU must each launch
   that many kernels, and only those kernels. A candidate that runs Triton on the calls the judge
   happens to look at and something else on the others differs here even when each call on its
   own looks clean.

The records are written by the worker, which shares its process with the candidate: the checks
that do not rest on the candidate's good behaviour are the ones made across calls (5) and the
judge's own comparisons of outputs and inputs (`benchmarks.harness.compare`). The probes are
explanatory signals, and each message says what was seen.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from benchmarks.harness.fallback import ALLOWED_ATEN_OPS
from benchmarks.harness.messages import CandidatePerf, FallbackInfo, GraphTiming
from benchmarks.harness.probes import PYTHON_ELEMENT_LIMIT
from benchmarks.verdict import ErrorClass


@dataclass(frozen=True)
class CallFailure:
    """The first call that failed: its error class and a message naming the call."""

    error: ErrorClass
    message: str


def _listed(ops: dict[str, int]) -> str:
    return ", ".join(f"{k} x{v}" for k, v in sorted(ops.items()))


def _kernels(launches: Counter[str]) -> str:
    return (
        "{" + ", ".join(f"{k} x{v}" for k, v in sorted(launches.items())) + "}"
        if launches
        else "none"
    )


def compute_ops(ops: dict[str, int]) -> dict[str, int]:
    """The ops of `ops` that compute (not allocation, views, copies or metadata)."""
    return {name: n for name, n in sorted(ops.items()) if name not in ALLOWED_ATEN_OPS}


# aten ops that hand one element to the host, and that write one host scalar into a tensor
SCALAR_READ_OPS = ("_local_scalar_dense", "item")
SCALAR_WRITE_OPS = ("fill_", "lift_fresh", "lift_fresh_copy", "scalar_tensor")

# On a task whose whole job is moving data (`Task.moves_data`: pixel shuffle, roll, padding,
# nearest upsampling, gathers), PyTorch copies of at least this share of the outputs' elements
# did that job: a permuted view made contiguous, slices or rows assembled into a buffer, then
# copied into the output by a Triton kernel, passed every other check
# (tests/hostile/copy_task_scratch_then_triton_copy.py, copy_task_slices_then_triton_copy.py,
# copy_task_contiguous_rows.py, gather_by_row_copies.py). Copies between contiguous pieces
# count as much as those between layouts: rows copied one by one did the roll.
COPIED_SHARE = 1 / 8


def judge_call(
    info: FallbackInfo, where: str, launch_needed: bool = True, moves_data: bool = False
) -> CallFailure | None:
    """What is wrong with one call's record on its own (1-4 above), or None. `launch_needed`
    False: the reference's result of this call has no elements (the judge computed it), so a
    call that launches no kernel is not a fallback; every other check still holds.
    `moves_data`: the task's work is data movement (`COPIED_SHARE`)."""
    outside, inside = compute_ops(info.all_ops), compute_ops(info.launch_ops)
    if info.quantized:
        # a cast from floating point to fp8 or an integer rounds every element: on a quantization
        # task it is the whole computation (red team, 2026-12-08: Triton scaled and clamped,
        # `.to(torch.float8_e4m3fn)` rounded, a Triton copy wrote the bytes:
        # tests/hostile/quant_rounding_by_torch_cast.py)
        return CallFailure(
            ErrorClass.FALLBACK,
            f"PyTorch rounded {info.quantized} floating-point element(s) to fp8 or an integer "
            f"type on {where} (a cast that quantizes is computation; do it in the kernel)",
        )
    if moves_data and info.copied and info.copied >= COPIED_SHARE * info.out_elements:
        return CallFailure(
            ErrorClass.FALLBACK,
            f"PyTorch moved the data on {where}: its copy ops (a view made contiguous, slices or "
            f"rows copied into a buffer) wrote {info.copied} elements for {info.out_elements} "
            "output elements, and moving the data is this task's whole job",
        )
    if outside:
        return CallFailure(
            ErrorClass.FALLBACK,
            f"PyTorch computed part of the result on {where}: aten ops {_listed(outside)}",
        )
    if inside:
        return CallFailure(
            ErrorClass.FALLBACK,
            f"PyTorch computed inside a Triton launch on {where} (a kernel body calling PyTorch, "
            f"possible only in the interpreter): aten ops {_listed(inside)}",
        )
    # elements read and written one Python scalar at a time, as the probes count them and as the
    # dispatcher saw them: a 0-dim tensor taken as a size (`expand(t)`, `narrow(0, t, 1)`) is
    # read in C++ (`_local_scalar_dense`, no Python method runs), and `fill_` or an indexed
    # assignment of a Python number writes one (red team, 2026-12-08: a whole softmax computed
    # in Python that way passed; tests/hostile/calls_python_via_sizes_and_fills.py)
    dense = sum(info.all_ops.get(op, 0) for op in SCALAR_READ_OPS)
    written = sum(info.all_ops.get(op, 0) for op in SCALAR_WRITE_OPS)
    reads = max(info.scalar_reads, dense)
    built = max(info.python_elements, written)
    if max(reads, built) > PYTHON_ELEMENT_LIMIT:
        return CallFailure(
            ErrorClass.FALLBACK,
            f"Python computed part of the result on {where}: the call read {reads} tensor "
            f"element(s) into Python values and built or wrote {built} from Python data (at "
            f"most {PYTHON_ELEMENT_LIMIT} allowed)",
        )
    if info.evasions:
        return CallFailure(
            ErrorClass.TRACE_EVADED,
            f"the call on {where} hid work from the judge's tracers: {'; '.join(info.evasions)}",
        )
    if info.output_problems:
        return CallFailure(ErrorClass.FALLBACK, f"{'; '.join(info.output_problems)} ({where})")
    if not info.launches and launch_needed:
        return CallFailure(ErrorClass.FALLBACK, f"no Triton kernel ran during the call on {where}")
    return None


def _covers(first: Counter[str], steady: Counter[str]) -> bool:
    """Every kernel of `steady` launched at least as often in `first`."""
    return all(first[name] >= n for name, n in steady.items())


class CallAudit:
    """The judge's record of every call of one evaluation, shape by shape; `failure` is the
    first failed call (None while every call passed), `ops` every aten op seen, summed."""

    def __init__(self, moves_data: bool = False) -> None:
        self.moves_data = moves_data  # the task's `moves_data` (`judge_call`)
        self.failure: CallFailure | None = None
        self.ops: Counter[str] = Counter()
        self.calls = 0
        self._first: dict[str, tuple[Counter[str], str]] = {}
        self._steady: dict[str, tuple[Counter[str], str]] = {}

    @property
    def fallback_ops(self) -> list[str]:
        """The compute ops seen in any call (for the verdict)."""
        return sorted(compute_ops(dict(self.ops)))

    def check(
        self, shape: str, where: str, info: FallbackInfo | None, launch_needed: bool = True
    ) -> None:
        """Judge one call of `shape` (its record `info`, None when the worker sent none);
        `launch_needed` as `judge_call` takes it."""
        self.calls += 1
        if info is None:
            self._fail(
                ErrorClass.HARNESS_ERROR,
                f"the worker sent no record of the call on {where} (every call is traced)",
            )
            return
        self.ops.update(info.all_ops)
        self.ops.update(info.launch_ops)
        failure = judge_call(info, where, launch_needed, self.moves_data)
        if failure is not None:
            self._fail(failure.error, failure.message)
            return
        self._check_launches(shape, where, Counter(info.launches))

    def check_perf(self, perf: CandidatePerf | None) -> None:
        """Judge the calls of the timing stage: the traced calls on the timing inputs like any
        other call, and every timed call's launch count and kernels against the shape's."""
        if perf is None:
            return
        for shape, timing in perf.shapes.items():
            for i, info in enumerate(timing.traced_calls):
                self.check(shape, f"shape {shape}, timing inputs, untimed call {i + 1}", info)
            steady = self._steady.get(shape) or self._first.get(shape)
            if steady is None or self.failure is not None:
                continue
            want, seen = steady
            per_call = sum(want.values())
            counts = {int(k): n for k, n in timing.timed_launch_counts.items()}
            odd = {k: n for k, n in counts.items() if k != per_call}
            if odd:
                self._fail(
                    ErrorClass.LAUNCH_MISMATCH,
                    f"while timed on shape {shape}, {sum(odd.values())} call(s) launched "
                    f"{', '.join(str(k) for k in sorted(odd))} Triton kernel(s), but every other "
                    f"call of that shape launches {per_call} ({_kernels(want)}, {seen}): the "
                    "candidate did other work while it was timed",
                )
            elif timing.timed_kernels and set(timing.timed_kernels) != set(want):
                self._fail(
                    ErrorClass.LAUNCH_MISMATCH,
                    f"while timed on shape {shape} the candidate launched "
                    f"{', '.join(sorted(timing.timed_kernels))}, but its other calls launch "
                    f"{', '.join(sorted(want))} ({seen})",
                )
            self._check_graph(shape, timing.graph, want, seen)

    def _check_graph(
        self, shape: str, graph: GraphTiming | None, want: Counter[str], seen: str
    ) -> None:
        """The calls captured into a CUDA graph (benchmarks/harness/graph_timing.py): traced
        like any call, and `calls` uncaptured plus `calls` captured calls must launch exactly
        2 x calls times what every other call of the shape launches."""
        if graph is None or graph.graph_us is None or self.failure is not None:
            return
        where = f"shape {shape}, the calls captured into a CUDA graph"
        if graph.traced is None:
            self._fail(ErrorClass.HARNESS_ERROR, f"the worker sent no record of {where}")
            return
        self.ops.update(graph.traced.all_ops)
        self.ops.update(graph.traced.launch_ops)
        failure = judge_call(graph.traced, where, moves_data=self.moves_data)
        if failure is not None:
            self._fail(failure.error, failure.message)
            return
        calls = 2 * graph.calls
        expected = Counter({name: n * calls for name, n in want.items()})
        got = Counter(graph.traced.launches)
        if calls <= 0 or got != expected:
            self._fail(
                ErrorClass.LAUNCH_MISMATCH,
                f"{calls} calls on {where} launched {_kernels(got)}, but one call of that shape "
                f"launches {_kernels(want)} ({seen}): the candidate did other work while it was "
                "captured",
            )

    def _check_launches(self, shape: str, where: str, launches: Counter[str]) -> None:
        if shape not in self._first:
            self._first[shape] = (launches, where)
            return
        first, first_where = self._first[shape]
        if shape not in self._steady:
            self._steady[shape] = (launches, where)
            if not _covers(first, launches):
                self._fail(
                    ErrorClass.LAUNCH_MISMATCH,
                    f"the call on {where} launched {_kernels(launches)}, but the first call of "
                    f"that shape ({first_where}) launched {_kernels(first)}: every call of a shape "
                    "must run the same Triton kernels",
                )
            return
        steady, steady_where = self._steady[shape]
        if launches != steady:
            self._fail(
                ErrorClass.LAUNCH_MISMATCH,
                f"the call on {where} launched {_kernels(launches)}, but the other calls of that "
                f"shape ({steady_where}, ...) launched {_kernels(steady)}: every call of a shape "
                "must run the same Triton kernels",
            )

    def _fail(self, error: ErrorClass, message: str) -> None:
        if self.failure is None:
            self.failure = CallFailure(error, message)
