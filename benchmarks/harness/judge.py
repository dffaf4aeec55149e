"""The judge: one candidate, one task, one verdict.

    verdict = evaluate(task, "my_kernel.py", JudgeConfig(device="cpu"))

Stages (see `benchmarks.verdict`): the static check runs here on the source text, never executing
it. Everything that executes the candidate runs in a child process (`benchmarks.harness.worker`) started
in its own process group and OS sandbox (`benchmarks.harness.sandbox`); a timeout kills it all. The child streams each trial's outputs back
as files; this process regenerates the same inputs from the same seeds, runs the task's reference
itself and compares. A crash, hang, `sys.exit` or `os._exit` in the candidate ends in a verdict,
and the next evaluation starts a fresh child.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from benchmarks.harness import after_timing, integrity, observer, procfs, sandbox
from benchmarks.harness import perf as perf_stage
from benchmarks.harness import shapes as shape_plan
from benchmarks.harness.calls import CallAudit
from benchmarks.harness.child import Child, acquire, default_root, send_inputs, signal_name
from benchmarks.harness.compare import as_outputs, bitwise_equal, changed_inputs, compare_outputs
from benchmarks.harness.graph_timing import graph_nudge, wants_graph
from benchmarks.harness.judge_config import JudgeConfig
from benchmarks.harness.messages import (
    PROTOCOL_VERSION,
    CandidateJob,
    CandidateResult,
    CorrectnessDoneEvent,
    Event,
    ImportedEvent,
    ImportEvent,
    MalformedEvent,
    MessageError,
    PerfEvent,
    ShapeSpec,
    StartEvent,
    Trial,
    TrialEvent,
)
from benchmarks.harness.precision import full_precision
from benchmarks.harness.probes import TAMPERED_EXIT
from benchmarks.harness.static_check import check_source
from benchmarks.harness.transport import Digest, TransportError, read_trial
from benchmarks.harness.watchdog import Watchdog
from benchmarks.harness.worker import trial_plan, trial_seed
from benchmarks.redaction import redact_verdict
from benchmarks.task import Shape, Task
from benchmarks.verdict import ErrorClass, Mismatch, ShapeResult, Stage, Verdict, stage_before

# how long past its timeout a worker may take to start the job (importing torch and triton on a
# loaded machine, initialising CUDA): the candidate's timeout counts from the start, this does not
BOOT_ALLOWANCE_S = 120.0

# the files of the calls after timing (worker: `_time_candidate`, `_time_graph`)
AFTER_FILES = ("after_timing_*.json", "graph_after_*.json")


def resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be cpu, cuda or auto, got {device!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda asked for, but torch sees no CUDA GPU here")
    return device


def _work_root(config: JudgeConfig) -> Path:
    if config.work_root is not None:
        config.work_root.mkdir(parents=True, exist_ok=True)
        return config.work_root
    return default_root()


def _fail(verdict: Verdict, error: ErrorClass, message: str, failed: Stage) -> Verdict:
    verdict.error_class = error
    verdict.message = message
    verdict.stage_reached = stage_before(failed)
    verdict.passed = False
    return verdict


def _correctness_stage(mode: str) -> Stage:
    return Stage.CORRECT_STANDARD if mode == "standard" else Stage.CORRECT_OUTLIER


def evaluate(
    task: Task,
    candidate: str | Path,
    config: JudgeConfig | None = None,
    *,
    source: str | None = None,
    label: str | None = None,
) -> Verdict:
    """Judge one candidate file (or `source` text) on `task`. Never raises for candidate faults.

    A worker lost before the candidate was imported (the judge's own failure) is retried once
    with a fresh process; the verdict then carries the flag `worker_retried`."""
    config = shape_plan.with_shape_seed(config or JudgeConfig())
    try:
        verdict = _evaluate_once(task, candidate, config, source=source, label=label)
        if "worker_lost" in verdict.flags:
            verdict = _evaluate_once(task, candidate, config, source=source, label=label)
            verdict.flags.append("worker_retried")
    finally:
        _release_gpu_cache()
    return redact_verdict(verdict)  # no configured secret leaves the judge (benchmarks.redaction)


def _release_gpu_cache() -> None:
    """Hand the GPU memory this process's caching allocator kept (the regenerated inputs and
    reference outputs of the last evaluation) back to the device. Several judges share one GPU
    (the correctness sweeps, an executor's lanes beside a model's run): an H200 sweep with 5
    judges at once, 2026-12-03, ran candidates out of memory while idle judges held 11-22 GiB each."""
    if torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def _evaluate_once(
    task: Task,
    candidate: str | Path,
    config: JudgeConfig | None = None,
    *,
    source: str | None = None,
    label: str | None = None,
) -> Verdict:
    config = config or JudgeConfig()
    t_start = time.perf_counter()
    undecodable = None
    if source is None:
        raw = Path(candidate).read_bytes()
        try:
            source = raw.decode("utf-8")
        except UnicodeDecodeError as exc:  # a verdict, not an exception out of the judge
            source = raw.decode("utf-8", errors="replace")
            undecodable = (
                f"{candidate}: not UTF-8 text (byte {exc.start}: {exc.reason}); "
                "candidates are UTF-8"
            )
    device = resolve_device(config.device)
    verdict = Verdict(
        task_id=task.id,
        candidate=label or str(candidate),
        candidate_sha256=hashlib.sha256(source.encode()).hexdigest(),
        device=device,
        seed=config.seed,
        trials=config.trials,
        notes=task.notes_for(device),
        isolation=sandbox.level(),
    )
    verdict.fingerprint = perf_stage.fingerprint(device)
    if task.cannot_pass():  # the notes say why; pass rates leave such tasks out
        verdict.flags.append("task_cannot_pass")
    refused = task.refusal(device)  # the task's own limit (too large for the CPU): no candidate's
    if refused:
        verdict.flags.append("task_refused")
        verdict.skipped.append(refused)
        return _fail(verdict, ErrorClass.HARNESS_ERROR, f"not judged: {refused}", Stage.STATIC)

    # -- static ---------------------------------------------------------------------------
    if undecodable:
        return _fail(verdict, ErrorClass.SYNTAX_ERROR, undecodable, Stage.STATIC)
    t0 = time.perf_counter()
    params = [p.name for p in task.signature().parameters.values()]
    static = check_source(
        source,
        entry_point=task.entry_point,
        params=params,
        forbidden=task.forbidden,
        filename=str(candidate),
        entry_kind=task.entry_kind,
    )
    verdict.stage_seconds["static"] = time.perf_counter() - t0
    if not static.ok:
        where = f" (line {static.line})" if static.line else ""
        return _fail(
            verdict, ErrorClass(static.error_class), f"{static.message}{where}", Stage.STATIC
        )
    verdict.stage_reached = Stage.STATIC

    plan = shape_plan.plan_shapes(task, device, config.shapes, config.shape_seed)
    shape_plan.record_plan(verdict, plan)
    shapes: list[Shape] = list(plan.shapes)
    if not shapes:
        return _fail(
            verdict, ErrorClass.HARNESS_ERROR, f"no shapes selected for {device}", Stage.COMPILE
        )
    modes = list(config.modes or task.modes)
    refused = sandbox.refusal(trusted=config.trusted, allow_unisolated=config.allow_unisolated)
    if refused:
        return _fail(verdict, ErrorClass.HARNESS_ERROR, refused, Stage.COMPILE)
    changed = integrity.verify(task, "since the judge first loaded it")
    if changed:
        return _fail(verdict, ErrorClass.HARNESS_ERROR, changed, Stage.COMPILE)
    child = acquire(
        device, _work_root(config), prewarm=config.prewarm, isolate=True, fork=not config.keep_dir
    )
    folder = child.folder
    if config.triton_cache_seed and Path(config.triton_cache_seed).is_dir():
        # kernels compiled ahead for this candidate alone, into the cache of its own worker
        shutil.copytree(config.triton_cache_seed, folder / ".triton" / "cache", dirs_exist_ok=True)
    staged = integrity.stage(task, folder)  # the worker reads a private read-only copy
    try:
        (folder / "candidate.py").write_text(source, encoding="utf-8")
        job = CandidateJob(
            task_path=str(staged),
            dtype=task.dtype,
            candidate_path=str(folder / "candidate.py"),
            device=device,
            shapes=[
                ShapeSpec(
                    name=s.name,
                    dims=dict(s.dims),
                    timed=shape_plan.is_scored(s),
                    graph=shape_plan.is_scored(s) and wants_graph(s.phase),
                )
                for s in shapes
            ],
            modes=modes,
            trials=config.trials,
            seed=config.seed,
            perf=config.perf and device == "cuda",
        )
        verdict = _run_candidate(verdict, task, child, job, shapes, config)
        shape_plan.mark_results(verdict, shapes)
    finally:
        child.kill()
        changed = integrity.verify(task, "during the evaluation") or integrity.verify_copy(
            task, staged
        )
        if not config.keep_dir:
            shutil.rmtree(folder, ignore_errors=True)
        if device == "cuda":
            # give the reference's and the outputs' memory back: judges running side by side (a
            # bench, `solutions_table --jobs`) otherwise each keep the largest task's worth cached
            torch.cuda.empty_cache()
    if changed:
        verdict.flags.append("task_changed")
        verdict = _fail(verdict, ErrorClass.HARNESS_ERROR, changed, Stage.CALL)
    if task.estimated_costs:
        _fill_estimated_costs(verdict, task)
    verdict.stage_seconds["total"] = time.perf_counter() - t_start
    return verdict


def _run_candidate(
    verdict: Verdict,
    task: Task,
    child: Child,
    job: CandidateJob,
    shapes: list[Shape],
    config: JudgeConfig,
) -> Verdict:
    """Hand `job` to the waiting `child`, check what it reports while it runs, and turn the
    outcome into the verdict."""
    t0 = time.perf_counter()
    checker = _TrialChecker(task, child.folder, job, shapes, verdict, t0)
    child.submit(dataclasses.replace(job, seed=None))  # the seed follows the import
    watch = child.watchdog(config.watch)
    try:
        stopped = _converse(child, checker, watch, t0 + config.timeout_s, config.timeout_s)
    finally:
        verdict.stage_seconds["watchdog"] = watch.seconds
    if stopped is not None:
        return _fail(verdict, stopped.error, stopped.message, stopped.stage)
    child.wait(5)
    verdict.stage_seconds["child"] = time.perf_counter() - t0
    verdict.stage_seconds.update(_child_timeline(child.events))

    if checker.failure:
        verdict.mismatch = checker.failure.mismatch
        verdict.shapes = list(checker.by_shape.values())
        return _fail(verdict, checker.failure.error, checker.failure.message, checker.failure.stage)
    try:
        result = child.result(CandidateResult)
    except MessageError as exc:
        verdict.flags.append("harness_error")
        return _fail(
            verdict,
            ErrorClass.HARNESS_ERROR,
            f"the candidate's process wrote a malformed result.json: {exc}",
            Stage.CALL,
        )
    if result is None:
        return _verdict_without_result(verdict, child)
    verdict = _verdict_from_result(verdict, task, job, shapes, config, checker, result)
    return _outside_checks(verdict, child, checker, result)


def _outside_checks(
    verdict: Verdict, child: Child, checker: _TrialChecker, result: CandidateResult
) -> Verdict:
    """The verdict from the worker's records, checked against what was seen from outside the
    candidate's process: the op pipe and the launch observer."""
    piped = _piped_compute(child, checker) if verdict.passed else None
    if piped is not None:  # the records said nothing of it
        return _fail(verdict, piped.error, piped.message, piped.stage)
    # the observer is asked also after an impossible time: launches the timer never saw are
    # the likelier cause, and the verdict names the cause rather than its symptom
    impossible = verdict.error_class == ErrorClass.IMPOSSIBLE_TIME
    seen = _observed_launches(child, result, verdict) if verdict.passed or impossible else None
    if seen is not None:  # what the candidate's process launched, counted from outside it
        also = " (its timings were also below the hardware's roofline)" if impossible else ""
        return _fail(verdict, seen.error, seen.message + also, seen.stage)
    return verdict


def _observed_launches(child: Child, result: CandidateResult, verdict: Verdict) -> _Failure | None:
    """The launch observer's counts (benchmarks/harness/observer), judged: a kernel PyTorch or
    a library launched in the trials or while timed is a fallback, whatever the worker's own
    records say; a stream cut short, forged or with markers missing is an evasion."""
    if child.observer is None:
        verdict.launch_observation = observer.describe(child.device)
        return None
    child.wait(5)
    try:
        windows = child.observer.windows()
    except observer.ObservationError as exc:
        verdict.launch_observation = f"observer stream refused: {exc}"
        return _Failure(ErrorClass.TRACE_EVADED, str(exc), Stage.NO_FALLBACK)
    perf = result.perf
    timed = [s for s in perf.shapes.values()] if perf is not None else []
    finding = observer.check(
        windows,
        timed=perf is not None,
        device_wide=bool(timed) and all(s.side_stream for s in timed),
    )
    verdict.launch_observation = observer.summary(windows)
    if finding is None:
        return None
    return _Failure(ErrorClass(finding.error), finding.message, Stage.NO_FALLBACK)


def _piped_compute(child: Child, checker: _TrialChecker) -> _Failure | None:
    """What the worker's op pipe says (benchmarks/harness/fallback.py): a compute op written
    there is a fallback whatever the call records say (a candidate can clear those in place);
    a pipe closed before the result came means its reports cannot be relied on."""
    if checker.ops_closed_early:
        return _Failure(
            ErrorClass.TRACE_EVADED,
            "the pipe on which the worker reports every compute op PyTorch dispatches in a call "
            "closed before the worker's result came: something in the candidate's process "
            "closed it",
            Stage.NO_FALLBACK,
        )
    seen = child.ops.seen()
    if not seen:
        return None
    listed = ", ".join(f"{name} x{n}" for name, n in sorted(seen.items())[:12])
    return _Failure(
        ErrorClass.FALLBACK,
        f"PyTorch computed part of the result: the worker's op pipe carried {listed} (the call "
        "records it sent listed no such op: they were changed in the candidate's process)",
        Stage.NO_FALLBACK,
    )


@dataclass
class _Failure:
    """Why the candidate failed: error class, message, the stage it failed, the first mismatch."""

    error: ErrorClass
    message: str
    stage: Stage
    mismatch: Mismatch | None = None


class _TrialChecker:
    """What the judge does with each line the worker writes while it runs: checks every trial's
    outputs against the reference on inputs regenerated here, refuses lines that break the
    protocol, and answers the worker's correctness_done with go_perf or stop."""

    def __init__(
        self,
        task: Task,
        folder: Path,
        job: CandidateJob,
        shapes: list[Shape],
        verdict: Verdict,
        t0: float,
    ) -> None:
        self.task, self.folder, self.job, self.verdict, self.t0 = task, folder, job, verdict, t0
        self.ops_closed_early = False  # the worker's op pipe closed before its result came
        self.plan = {t.n: t for t in trial_plan(job.shapes, job.modes, job.trials, job.seed)}
        self.by_shape: dict[str, ShapeResult] = {
            s.name: ShapeResult(
                shape=s.name,
                dims=s.dims,
                dtype=task.dtype,
                weight=s.weight,
                phase=s.phase if job.device == "cuda" else "cpu",
            )
            for s in shapes
        }
        self.gen = torch.Generator(device=job.device)
        self.failure: _Failure | None = None
        self.compared = 0
        self.seen: set[int] = set()
        self.pending_nondet: str | None = None
        self.nondet_note: str | None = None
        self.calls = CallAudit(task.moves_data)  # every call's record, judged here
        self.answered = False
        self.seed_sent = False
        # the files of the calls after timing, taken as they appear (`take_after_files`)
        self.taken: dict[str, dict[str, Any] | TransportError] = {}

    def take_after_files(self) -> None:
        """Read (and so delete) the outputs of each call after timing as soon as the worker
        writes them: the worker waits for that before the candidate runs again, so its later
        timed calls, which no probe watches, cannot rewrite the bytes before they are read."""
        for pattern in AFTER_FILES:
            for path in sorted(self.folder.glob(pattern)):
                if path.name in self.taken:
                    continue
                try:
                    self.taken[path.name] = read_trial(path, str(self.gen.device))
                except TransportError as exc:
                    self.taken[path.name] = exc

    def handle(self, evt: Event) -> None:
        if isinstance(evt, MalformedEvent):
            self._refuse(f"a malformed progress line: {evt.error} (line: {evt.raw!r})")
        elif isinstance(evt, StartEvent) and evt.protocol != PROTOCOL_VERSION:
            self._refuse(f"protocol {evt.protocol}, not the judge's {PROTOCOL_VERSION}")
        elif isinstance(evt, TrialEvent) and self.failure is None:
            self._on_trial(evt)
        elif isinstance(evt, ImportedEvent) and not self.seed_sent:
            self._send_seed()
        elif isinstance(evt, CorrectnessDoneEvent) and not self.answered:
            self._answer()

    def _send_seed(self) -> None:
        """inputs.json, once the candidate is imported."""
        self.seed_sent = True
        send_inputs(self.folder, self.job.seed)  # type: ignore[arg-type]

    def _refuse(self, what: str) -> None:
        if self.failure is None:
            self.verdict.flags.append("harness_error")
            self.failure = _Failure(
                ErrorClass.HARNESS_ERROR,
                f"the candidate's process broke the worker protocol: {what}",
                Stage.CALL,
            )

    def _on_trial(self, evt: TrialEvent) -> None:
        item = self.plan.get(evt.n)
        if item is None or evt.n in self.seen or evt.file != f"trial_{evt.n}.json":
            self._refuse(
                f"a trial line that is not in the plan of {len(self.plan)} trials "
                f"(trial {evt.n}, file {evt.file[:100]!r}, seen before: {evt.n in self.seen})"
            )
            return
        self.seen.add(evt.n)
        if item.n == 0:
            self.verdict.stage_seconds["first_call"] = time.perf_counter() - self.t0
        failure, nd, empty = _check_trial(
            self.task,
            self.folder / evt.file,
            item,
            self.gen,
            self.by_shape[item.shape],
        )
        self.failure = failure
        self.compared += 1
        if nd == "bits":
            self.nondet_note = (
                f"repeat call on shape {item.shape} differed in the last bits (within tolerance)"
            )
        elif nd:
            self.pending_nondet = self.pending_nondet or nd
        where = f"{item.where()} (seed {item.seed})"
        # a call whose reference result has no elements (an empty input) needs no kernel
        self.calls.check(item.shape, where, evt.fallback, launch_needed=not empty)
        if item.first:
            self.calls.check(
                item.shape, f"{where}, repeat call", evt.repeat_fallback, launch_needed=not empty
            )

    def _answer(self) -> None:
        self.answered = True
        self.verdict.stage_seconds["correctness"] = time.perf_counter() - self.t0
        go = self.failure is None and self.pending_nondet is None and self.calls.failure is None
        (self.folder / ("go_perf" if go and self.job.perf else "stop")).touch()


def _converse(
    child: Child, checker: _TrialChecker, watch: Watchdog, deadline: float, timeout_s: float
) -> _Failure | None:
    """Feed the worker's lines to `checker` until a trial fails, the worker exits, a limit
    `watch` looks after is crossed or the deadline passes; the timeout or the limit crossed, or
    None. The worker is killed on a failure, a limit or a timeout."""
    started = False  # the candidate's clock starts when its worker starts the job
    try:
        while checker.failure is None:
            for evt in child.poll_events():
                if not started and isinstance(evt, StartEvent):
                    # a worker still importing torch when the job came (a cold one, a loaded
                    # machine) spent the judge's time, not the candidate's
                    started, deadline = True, time.perf_counter() + timeout_s
                checker.handle(evt)
            if checker.failure is not None:
                break
            if checker.answered and checker.job.perf:
                checker.take_after_files()
            # the op pipe closes when the worker exits, after its result: closed before the
            # result exists, something in the worker closed it (fallback.py)
            if child.ops.closed.is_set() and not (child.folder / "result.json").exists():
                checker.ops_closed_early = True
            if child.proc.poll() is not None:
                for evt in child.poll_events():  # lines written just before the exit
                    checker.handle(evt)
                break
            now = time.perf_counter()
            if not started and now > deadline + BOOT_ALLOWANCE_S:
                child.kill()
                return _Failure(
                    ErrorClass.HARNESS_ERROR,
                    f"the judge's worker did not start the job within "
                    f"{timeout_s + BOOT_ALLOWANCE_S:.0f} s (its own start-up, before any "
                    f"candidate code ran) and was killed",
                    Stage.CALL,
                )
            if started and now > deadline:
                step = child.last_step()
                child.kill()
                return _Failure(
                    ErrorClass.TIMEOUT,
                    f"the candidate process ran past the {timeout_s:.0f} s limit {step} and was killed",
                    Stage.CALL,
                )
            if watch.due(now) and (over := watch.check()) is not None:
                step = child.last_step()
                child.kill()
                return _Failure(
                    ErrorClass.RESOURCE_LIMIT,
                    f"{over.message} {step}; the judge killed them ({over.what} limit)",
                    Stage.CALL,
                )
            time.sleep(0.005)
    except BaseException:
        child.kill()
        raise
    if checker.failure is not None:
        child.kill()
    return None


def _host_oom(child: Child) -> bool:
    """Whether the kernel's OOM killer killed anything since `child` was given its job."""
    before, now = child.oom_kills_at_submit, procfs.oom_kills()
    return before is not None and now is not None and now > before


def _verdict_without_result(verdict: Verdict, child: Child) -> Verdict:
    """The verdict when the worker exited without a result: lost in its own set-up (the judge's
    failure, retried), killed by a signal, or exited early."""
    code = child.returncode()
    step = child.last_step()
    tail = child.stderr_tail()
    if not any(isinstance(evt, ImportEvent) for evt in child.events):
        # the worker died in its own set-up, before any candidate code ran (out of memory at
        # CUDA start-up, say): the judge's failure, never the candidate's
        verdict.flags.append("worker_lost")
        return _fail(
            verdict,
            ErrorClass.HARNESS_ERROR,
            f"the worker process exited with code {code} before the candidate was imported (not the candidate's fault). stderr: {tail[-600:]}",
            Stage.COMPILE,
        )
    if code == TAMPERED_EXIT:
        return _fail(
            verdict,
            ErrorClass.TRACE_EVADED,
            f"the worker stopped {step}: the judge's own code in the candidate's process (the "
            "tracers, the probes, the transport, the worker's writers) was replaced, so what it "
            f"recorded cannot be believed. stderr: {tail[-300:]}",
            Stage.CALL,
        )
    if code == -signal.SIGXCPU:
        return _fail(
            verdict,
            ErrorClass.RESOURCE_LIMIT,
            f"the candidate process used up its CPU-time limit {step} (SIGXCPU)",
            Stage.CALL,
        )
    if code == -signal.SIGKILL and _host_oom(child):
        # the kernel's OOM killer chose it: the machine, not necessarily the candidate, ran out
        # (the watchdog bounds the candidate's own memory); a sweep judges such a task again alone
        verdict.flags.append("host_oom")
        return _fail(
            verdict,
            ErrorClass.CRASH,
            f"the candidate process was killed (SIGKILL) {step} while the kernel's out-of-memory "
            "killer was killing processes: the machine ran out of memory, perhaps through other "
            f"processes (flag host_oom). stderr: {tail[-600:]}",
            Stage.CALL,
        )
    if code is not None and code < 0:
        return _fail(
            verdict,
            ErrorClass.CRASH,
            f"the candidate process died with {signal_name(code)} {step}. stderr: {tail[-600:]}",
            Stage.CALL,
        )
    return _fail(
        verdict,
        ErrorClass.EARLY_EXIT,
        f"the candidate process exited with code {code} {step} without returning a result (sys.exit / os._exit?)",
        Stage.CALL,
    )


def _verdict_from_result(
    verdict: Verdict,
    task: Task,
    job: CandidateJob,
    shapes: list[Shape],
    config: JudgeConfig,
    checker: _TrialChecker,
    result: CandidateResult,
) -> Verdict:
    """The verdict from the worker's result, once every trial it shipped passed: its error, or
    the stages after correctness (determinism, no fallback) and the timings."""
    planned = len(checker.plan)
    if result.failed:
        error = ErrorClass(result.error_class or "harness_error")
        stage = {
            ErrorClass.IMPORT_ERROR: Stage.COMPILE,
            ErrorClass.COMPILE_ERROR: Stage.COMPILE,
            ErrorClass.PARAMETER_MISMATCH: Stage.COMPILE,
        }.get(error, Stage.CALL)
        if error == ErrorClass.HARNESS_ERROR:
            verdict.flags.append("harness_error")
        if checker.compared < planned or result.where:
            return _fail(verdict, error, result.message, stage)
        # failure while timing, after correctness passed
        verdict.flags.append("perf_failed")
        verdict.perf_status = f"failed: {result.message}"
    if checker.compared < planned:
        return _fail(
            verdict,
            ErrorClass.HARNESS_ERROR,
            f"the worker returned after {checker.compared} of {planned} trials",
            Stage.CALL,
        )

    verdict.triton_launches = dict(result.launches_total)
    if result.ptx_features is not None:
        verdict.ptx_features = result.ptx_features
    checker.calls.check_perf(result.perf)  # the timing stage's calls, judged like the others
    failed = _after_correctness(verdict, job, checker)
    if failed is not None:
        return failed
    checker.take_after_files()  # any written just before the worker's exit
    failure = _check_after_timing(
        task, job, checker.folder, checker.gen, result, verdict, checker.taken
    )
    if failure is not None:
        verdict.shapes = list(checker.by_shape.values())
        verdict.mismatch = failure.mismatch
        return _fail(verdict, failure.error, failure.message, failure.stage)
    verdict.passed = True
    verdict.shapes = list(checker.by_shape.values())
    _perf(verdict, task, job, shapes, config, result)
    return verdict


def _after_correctness(
    verdict: Verdict, job: CandidateJob, checker: _TrialChecker
) -> Verdict | None:
    """The stages after correctness: deterministic, then no PyTorch fallback. The failed
    verdict, or None when both passed."""
    verdict.stage_reached = (
        Stage.CORRECT_OUTLIER if any(m != "standard" for m in job.modes) else Stage.CORRECT_STANDARD
    )
    if checker.pending_nondet:
        return _fail(
            verdict, ErrorClass.NONDETERMINISTIC, checker.pending_nondet, Stage.DETERMINISTIC
        )
    if checker.nondet_note:
        verdict.flags.append("nondeterministic_bits")
    verdict.stage_reached = Stage.DETERMINISTIC

    calls = checker.calls
    verdict.aten_ops = dict(sorted(calls.ops.items()))
    if calls.failure is not None:
        verdict.fallback_ops = calls.fallback_ops
        if calls.failure.error == ErrorClass.HARNESS_ERROR:
            verdict.flags.append("harness_error")
        return _fail(verdict, calls.failure.error, calls.failure.message, Stage.NO_FALLBACK)
    verdict.stage_reached = Stage.NO_FALLBACK
    return None


def _perf(
    verdict: Verdict,
    task: Task,
    job: CandidateJob,
    shapes: list[Shape],
    config: JudgeConfig,
    result: CandidateResult,
) -> None:
    """The perf stage's numbers from the worker's timings (or why there are none)."""
    if job.device != "cuda":
        verdict.perf_status = "not measured (no GPU)"
        return
    if not job.perf:
        verdict.perf_status = "not measured (perf off)"
        return
    if result.perf:
        t1 = time.perf_counter()
        timed = shape_plan.scored(shapes)
        impossible = perf_stage.fill_perf(verdict, task, timed, result.perf.by_shape_dict(), config)
        verdict.stage_seconds["perf"] = (
            time.perf_counter() - t1 + verdict.stage_seconds.get("perf", 0.0)
        )
        if impossible:  # a time the hardware cannot reach is not a speed: it fails the kernel
            _fail(
                verdict,
                ErrorClass.IMPOSSIBLE_TIME,
                f"timed faster than the hardware allows on {', '.join(impossible)} (below the "
                "datasheet roofline): work skipped or answered from a cache, or a timing bug; "
                "the shapes' notes give the times",
                Stage.PERF,
            )


def _check_after_timing(
    task: Task,
    job: CandidateJob,
    folder: Path,
    gen: torch.Generator,
    result: CandidateResult,
    verdict: Verdict,
    taken: dict[str, Any] | None = None,
) -> _Failure | None:
    """Each timed shape's call after timing (benchmarks/harness/after_timing.py), and the CUDA
    graph's replay after its own change where the shape was timed inside one
    (benchmarks/harness/graph_timing.py): inputs and answer checked against the timing inputs
    regenerated here, with the same elements changed."""
    if result.perf is None:
        return None
    taken = {} if taken is None else taken
    specs = {s.name: s for s in job.shapes}
    for name, timing in result.perf.shapes.items():
        spec = specs.get(name)
        if spec is None or not timing.after_file:
            return _Failure(
                ErrorClass.HARNESS_ERROR,
                f"the worker did not ship the call after timing for {name}",
                Stage.PERF,
            )
        checks = [
            (
                timing.after_file,
                lambda args, skip, n=name, b=job.seed: after_timing.change_inputs(
                    args, b, n, skip=skip
                ),
                f"shape {name}, the call after timing (elements of each input changed)",
                "as if the timed calls were answered from a cache",
            )
        ]
        graph = timing.graph
        if spec.graph and graph is not None and graph.graph_us is not None:
            if not graph.after_file:
                return _Failure(
                    ErrorClass.HARNESS_ERROR,
                    f"the worker timed {name} inside a CUDA graph but shipped no replay after it",
                    Stage.PERF,
                )
            checks.append(
                (
                    graph.after_file,
                    lambda args, skip, n=name, b=job.seed: graph_nudge(args, b, n, skip=skip),
                    f"shape {name}, the CUDA graph replayed after timing (elements of each "
                    "input changed)",
                    "as if the work was done outside the graph's capture",
                )
            )
        for file, change, where, as_if in checks:
            failure = _check_changed_call(
                task, spec, job.seed, folder, gen, file, change, where, taken
            )
            if isinstance(failure, str):
                verdict.skipped.append(failure)
            elif failure is not None:
                if failure.error in (ErrorClass.NUMERICAL_MISMATCH, ErrorClass.NAN_INF_MISMATCH):
                    failure.message += f": the answer did not follow the changed input, {as_if}"
                return failure
    return None


def _check_changed_call(
    task: Task,
    spec: ShapeSpec,
    base_seed: int,
    folder: Path,
    gen: torch.Generator,
    file: str,
    change: Callable[[list, tuple[int, ...]], None],
    where: str,
    taken: dict[str, Any],
) -> _Failure | str | None:
    """One answer on the timing inputs changed by `change(args, skip)` (as the worker changed
    them), checked: a failure, a note on why it was not compared, or None. `taken`: the after
    files the judge already read (`_TrialChecker.take_after_files`)."""
    name = spec.name
    try:
        payload = taken.pop(file) if file in taken else read_trial(folder / file, str(gen.device))
        if isinstance(payload, TransportError):
            raise payload
    except TransportError as exc:
        return _Failure(
            ErrorClass.WRONG_OUTPUT_TYPE,
            f"outputs on {where} could not be read back: {exc}",
            Stage.PERF,
        )
    gen.manual_seed(trial_seed(base_seed, name, "perf", 0))
    args = task.make_inputs(spec.dims, "standard", gen)
    outs = task.output_args(spec.dims)
    original = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
    change(args, outs)
    changed = changed_inputs(payload.get("inputs"), args)
    if changed is None:
        return _Failure(
            ErrorClass.HARNESS_ERROR,
            f"the worker did not ship the inputs of {where}",
            Stage.PERF,
        )
    changed = [i for i in changed if i not in outs]
    if changed:
        return _Failure(
            ErrorClass.INPUT_MUTATED,
            f"the inputs {changed} differ after timing on shape {name}: the candidate wrote "
            "into an input while it was timed; inputs are read-only",
            Stage.PERF,
        )
    with torch.no_grad(), full_precision():
        want = task.reference_for(spec.dims)(*args)
        scale = task.error_terms(args)
    if not after_timing.finite(want) and _finite_reference(task, spec.dims, original):
        return (
            f"{where}: not compared, the changed element leaves the task's domain "
            "(the reference is no longer finite)"
        )
    cmp = compare_outputs(payload["out"], want, task.tolerance, scale)
    if not cmp.ok:
        return _Failure(cmp.error_class, f"{cmp.message} [{where}]", Stage.PERF, cmp.mismatch)
    return None


def _finite_reference(task: Task, dims: dict[str, int], args: list) -> bool:
    with torch.no_grad(), full_precision():
        return after_timing.finite(task.reference_for(dims)(*args))


def _fill_estimated_costs(verdict: Verdict, task: Task) -> None:
    """FLOPs and bytes per shape for tasks whose costs are measured estimates (imported formats),
    also where no perf stage ran (on the CPU); the verdict's notes say they are estimates."""
    for sr in verdict.shapes:
        if sr.flops is None:
            sr.flops, sr.bytes = task.flops(sr.dims), task.min_bytes(sr.dims)


def _child_timeline(events: list[Event]) -> dict[str, float]:
    """Seconds the child spent importing the candidate, in its first call (compile, op tracing),
    in the remaining trials, and timing — from the timestamps on its progress lines."""
    first: dict[str, float] = {}
    for evt in events:
        if isinstance(evt, MalformedEvent):
            continue
        if evt.kind not in first:
            first[evt.kind] = evt.t
        if isinstance(evt, PerfEvent) and evt.graph and "graph" not in first:
            first["graph"] = evt.t  # the first decode shape timed inside a CUDA graph
    spans = {
        "child_import": ("import", "call"),
        "child_first_call": ("call", "trial"),
        "child_first_inputs": ("call", "first_inputs"),
        "child_first_fn": ("first_inputs", "first_called"),
        "child_first_repeat": ("first_called", "first_repeated"),
        "child_first_ship": ("first_repeated", "trial"),
        "child_trials": ("trial", "correctness_done"),
        "child_perf": ("correctness_done", "done"),
        "child_perf_setup": ("correctness_done", "perf"),  # before the first shape is timed
        "child_perf_graphs": ("graph", "done"),  # the decode shapes inside CUDA graphs
    }
    return {
        name: first[b] - first[a] for name, (a, b) in spans.items() if a in first and b in first
    }


def _no_elements(value: object) -> bool:
    """Whether a reference result holds tensors and every one of them is empty."""
    items = list(value) if isinstance(value, tuple | list) else [value]
    tensors = [t for t in items if isinstance(t, torch.Tensor)]
    return bool(tensors) and all(t.numel() == 0 for t in tensors)


def _check_trial(
    task: Task,
    path: Path,
    item: Trial,
    gen: torch.Generator,
    shape_result: ShapeResult,
) -> tuple[_Failure | None, str | None, bool]:
    """Compare one trial's outputs with the reference. Returns (failure, nondeterminism,
    whether the reference's result has no elements at all: computed here, out of the
    candidate's reach)."""
    stage = _correctness_stage(item.mode)
    where = f"{item.where()} (seed {item.seed})"
    try:
        payload = read_trial(path, str(gen.device))
    except TransportError as exc:  # the candidate's process wrote something we cannot read
        return (
            _Failure(
                ErrorClass.WRONG_OUTPUT_TYPE,
                f"outputs on {where} could not be read back: {exc}",
                stage,
            ),
            None,
            False,
        )
    gen.manual_seed(item.seed)
    args = task.make_inputs(item.dims, item.mode, gen)
    for key, call in (("inputs", "call"), ("repeat_inputs", "repeat call")):
        if key == "repeat_inputs" and not item.first:
            continue
        changed = changed_inputs(payload.get(key), args)  # decided here, on regenerated inputs
        if changed:  # buffers the task says are outputs (out= arguments) are meant to be written
            changed = [i for i in changed if i not in task.output_args(item.dims)]
        if changed is None:
            return (
                _Failure(
                    ErrorClass.HARNESS_ERROR,
                    f"the worker did not ship the inputs of the {call} on {where} back",
                    stage,
                ),
                None,
                False,
            )
        if changed:
            return (
                _Failure(
                    ErrorClass.INPUT_MUTATED,
                    f"the candidate modified input(s) {changed} in the {call} on {where}; inputs are read-only",
                    stage,
                ),
                None,
                False,
            )
    with torch.no_grad(), full_precision():
        want = task.reference_for(item.dims)(*args)
        scale = task.error_terms(args)
    got = payload["out"]
    tol = task.tolerance
    cmp = compare_outputs(got, want, tol, scale)
    if not cmp.ok:
        shape_result.notes.append(f"first failure at {where}")
        return (
            _Failure(cmp.error_class, f"{cmp.message} [{where}]", stage, cmp.mismatch),
            None,
            False,
        )
    if cmp.ok:
        shape_result.max_abs_err = max(shape_result.max_abs_err or 0.0, cmp.max_abs_err)
        shape_result.max_rel_err = max(shape_result.max_rel_err or 0.0, cmp.max_rel_err)
        for attr, worse in (("cosine", min), ("rel_l1", max), ("rmse", max)):
            val = getattr(cmp, attr)
            if val is not None:
                cur = getattr(shape_result, attr)
                setattr(shape_result, attr, val if cur is None else worse(cur, val))
    nondet = None
    if payload.get("repeat") is not None:
        repeat = payload["repeat"]
        if not bitwise_equal(repeat, got) and any(
            isinstance(r, Digest) for r in as_outputs(repeat)
        ):
            # the worker ships a repeat as a digest only where its bytes are the first call's
            nondet = (
                "a repeat call on the same inputs was shipped as the first call's bytes, which "
                f"it is not [{where}]"
            )
        elif not bitwise_equal(repeat, got):
            again = compare_outputs(repeat, got if cmp.ok else want, tol, scale)
            nondet = (
                "bits"
                if again.ok
                else f"a repeat call on the same inputs disagreed with the first ({again.message}) [{where}]"
            )
    return None, nondet, _no_elements(want)
