"""The child process that runs an untrusted candidate (or a trusted baseline) for the judge.

    python -m benchmarks.harness.worker <request.json>
    python -m benchmarks.harness.worker --serve <folder> <device> [<judge pid>]  (what the judge starts: imports
        first, then waits for <folder>/request.json; see benchmarks/harness/child.py)

The judge (`benchmarks/harness/judge.py`) writes the request, starts this process in its own process
group, and reads what it writes into the request's folder:

    progress.jsonl   one JSON line per step; the judge reads it while we run
    trial_<n>.json   the candidate's outputs for trial n, with trial_<n>.bin (benchmarks/harness/transport.py)
    result.json      written last; its absence means the process died or exited early

Every one of these messages is a record of `benchmarks/harness/messages.py`.

Protocol for a candidate job: run every correctness trial and write its file, then write a
"correctness_done" line and wait for the judge to create `go_perf` (it does so only when every
trial passed) or `stop`. The judge compares outputs, and the inputs as they were after the call,
in its own process, and judges the record of every call (`benchmarks.harness.calls`); nothing
here decides a verdict (the worker's own input check is shipped as an explanation only).

This module imports only torch, triton and our `benchmarks` / `profiling` packages: it must run on
the GPU machine, which has none of our other dependencies.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import os
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.harness.messages import (
    PROTOCOL_VERSION,
    BaselineEvent,
    BaselineJob,
    BaselineResult,
    BaselineTimes,
    CallEvent,
    CandidateJob,
    CandidatePerf,
    CandidateResult,
    CorrectnessDoneEvent,
    DoneEvent,
    Event,
    FallbackInfo,
    FirstCalledEvent,
    FirstInputsEvent,
    FirstRepeatedEvent,
    GraphTiming,
    ImportedEvent,
    ImportEvent,
    Job,
    JobResult,
    MessageError,
    PeaksEvent,
    PerfEvent,
    ReadyEvent,
    RemeasureJob,
    RemeasureResult,
    ShapeSpec,
    ShapeTiming,
    StartEvent,
    StreamProfile,
    SweepJob,
    SweepResult,
    SweepTiming,
    Trial,
    TrialEvent,
    dump,
    parse_inputs,
    parse_job,
    result_type,
)
from benchmarks.harness.observer import FD_ENV as OBSERVER_FD_ENV

# Bind the clock and the synchronisation before any candidate code exists in this process.
REPO_ROOT = Path(__file__).resolve().parents[2]
_perf_counter = time.perf_counter
_sleep = time.sleep

__all__ = ["PROTOCOL_VERSION", "load_module", "main", "same_bits", "trial_plan", "trial_seed"]


def trial_seed(base: int, shape: str, mode: str, trial: int) -> int:
    """A stable seed per (base seed, shape, mode, trial); the judge derives the same one."""
    digest = hashlib.sha256(f"{base}|{shape}|{mode}|{trial}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def trial_plan(
    shapes: list[ShapeSpec], modes: list[str], trials: int, base_seed: int
) -> list[Trial]:
    """Every (shape, mode, trial) the correctness stage runs, in order, numbered."""
    plan: list[Trial] = []
    # mode-major, so every shape passes "standard" before any "outlier" trial runs and the
    # stage a failure is reported at is the earliest one that fails
    for mode in modes:
        for shape in shapes:
            for t in range(trials):
                plan.append(
                    Trial(
                        n=len(plan),
                        shape=shape.name,
                        dims=shape.dims,
                        mode=mode,
                        trial=t,
                        seed=trial_seed(base_seed, shape.name, mode, t),
                        # repeat the call on the first standard trial of each shape (every
                        # call is traced)
                        first=mode == "standard" and t == 0,
                    )
                )
    return plan


class _Progress:
    """Writes progress events to progress.jsonl, one line each, stamped with the clock."""

    def __init__(self, folder: Path) -> None:
        self._f = open(folder / "progress.jsonl", "a", buffering=1)  # noqa: SIM115

    def __call__(self, event: Event) -> None:
        self._f.write(dump(dataclasses.replace(event, t=round(_perf_counter(), 4))) + "\n")
        self._f.flush()
        os.fsync(self._f.fileno())


def _quiet(event: Event) -> None:
    """A progress sink that writes nothing (the timeline steps of trials after the first)."""


def _classify(exc: BaseException, calls_done: int, in_call: bool = False) -> str:
    """The error class of an exception the candidate's code let out. `in_call`: raised from a
    correctness call, where nothing of the worker's own can fail (its JudgeAbsent there is the
    candidate's, taken from the worker's module and raised to blame the judge)."""
    from benchmarks.harness.probes import (  # the worker has torch by now
        NativeAccessRefused,
        ReadCapExceeded,
    )

    text = describe(exc)  # runs the candidate's __str__ once
    name = text.partition(":")[0]
    if isinstance(exc, SystemExit):
        return "early_exit"
    if isinstance(exc, JudgeAbsent) and not in_call:
        return "harness_error"
    if isinstance(exc, ReadCapExceeded):  # Python computed the result, element by element
        return "fallback"
    if isinstance(exc, NativeAccessRefused):  # it read memory by address (ctypes)
        return "trace_evaded"
    # out of address space (RLIMIT_AS), a full scratch tmpfs, the file-size or open-file limit
    if isinstance(exc, MemoryError) or (
        isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EMFILE)
    ):
        return "resource_limit"
    if (
        "CompilationError" in name
        or "CompileError" in name
        or (calls_done == 0 and "triton" in type(exc).__module__)
    ):
        return "compile_error"
    if "illegal memory access" in text or "CUDA error" in text or "misaligned address" in text:
        return "crash"
    return "runtime_error"


def describe(exc: BaseException, limit: int = 1500) -> str:
    """`Name: message` of a candidate's exception, cut at `limit` characters. Formatting runs the
    candidate's code (`__str__`, a metaclass's `__name__`); where that raises, it is said so."""
    try:
        name = str(type(exc).__name__)
    except BaseException:  # noqa: BLE001
        name = "an exception"
    try:
        text = str(exc)
    except BaseException as inner:  # noqa: BLE001
        text = f"(its message could not be formatted: str() raised {type(inner).__name__})"
    return f"{name}: {text}"[:limit]


def _same(a: Any, b: Any) -> bool:
    """`same_bits`, for an input the candidate held: one it broke (its `.data` swapped for a meta
    tensor, its storage freed) is not the same."""
    try:
        return same_bits(a, b)
    except Exception:  # noqa: BLE001
        return False


def _short_tb(exc: BaseException, limit: int = 4000) -> str:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return text[-limit:]


def load_module(path: str | Path, name: str) -> Any:
    """Import the file at `path` as module `name` (registered in sys.modules)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def same_bits(a: Any, b: Any) -> bool:
    """Two tensors hold the same values bit for bit (NaN equal to NaN). Shared with the judge's
    comparison; defined here because this module may import nothing but torch and triton."""
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    b = b.to(a.device)
    if a.is_floating_point():
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return torch.equal(a, b)


def _wait_gone(path: Path, timeout_s: float) -> Path | None:
    """Wait until `path` no longer exists (the judge took it); None then, else `path`."""
    deadline = _perf_counter() + timeout_s
    pause = 0.0005
    while path.exists():
        if _perf_counter() > deadline:
            return path
        _sleep(pause)
        pause = min(pause * 2, 0.005)
    return None


class JudgeAbsent(RuntimeError):
    """The judge did not take a file the worker waits on: the harness's failure."""


def _taken(path: Path, timeout_s: float) -> None:
    """Wait until the judge has taken `path`; JudgeAbsent when it does not in time."""
    if _wait_gone(path, timeout_s) is not None:
        raise JudgeAbsent(f"the judge did not take {path.name} within {timeout_s:.0f} s")


def _wait_for(folder: Path, names: tuple[str, ...], timeout_s: float) -> str | None:
    deadline = _perf_counter() + timeout_s
    while _perf_counter() < deadline:
        for name in names:
            if (folder / name).exists():
                return name
        _sleep(0.01)
    return None


# ------------------------------------------------------------------------------------------
# candidate job
# ------------------------------------------------------------------------------------------


@dataclass
class _SetupFailure:
    """Why the candidate's callable for a shape could not be built."""

    error_class: str
    message: str
    traceback: str = ""


class _Bound:
    """The candidate's callable per shape: its entry function, or for a class entry point
    (KernelBench's ModelNew) an instance built for that shape's sizes with the reference's
    weights copied in (`Task.bind_candidate`). A failure to build is returned as a
    `_SetupFailure`."""

    def __init__(self, task: Any, entry: Any, device: str) -> None:
        self.task, self.entry, self.device = task, entry, device
        self._fns: dict[str, Any] = {}

    def get(self, shape: str, dims: dict) -> Any:
        if shape in self._fns:
            return self._fns[shape]
        from benchmarks.task import CandidateSetupError

        try:
            fn = self.task.bind_candidate(self.entry, dims, self.device)
        except CandidateSetupError as exc:
            return _SetupFailure("parameter_mismatch", str(exc))
        except BaseException as exc:  # noqa: BLE001 - building the untrusted class failed
            cls = "early_exit" if isinstance(exc, SystemExit) else "runtime_error"
            return _SetupFailure(
                cls,
                f"building {self.task.entry_point} for shape {shape} {dims} failed: {describe(exc, 1500)}",
                _short_tb(exc),
            )
        self._fns[shape] = fn
        return fn


def _protect_task(task: Any, probes: Any) -> None:
    """Seal what making a trial's inputs runs (`run_candidate`): the task's fields (a frozen
    dataclass, which `object.__setattr__` still reaches), its classes' namespaces, and every
    module of the project's or the task's own (its file, a suite's helpers) now loaded."""
    probes.protect_module(task)
    for cls in type(task).__mro__[:-1]:
        probes.protect_module(cls)
    roots = [str(REPO_ROOT)]
    path = getattr(task, "path", None)
    if path is not None:
        roots.append(str(Path(path).resolve().parent))
    suite = getattr(task, "suite_root", None)
    if suite is not None:
        roots.append(str(Path(suite).resolve()))
    own = getattr(task, "module", None)
    installed = tuple(  # a virtual environment inside the project is not the project's code
        os.path.realpath(p).rstrip("/") + "/" for p in {sys.prefix, sys.base_prefix}
    )
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        real = os.path.realpath(file) if isinstance(file, str) else ""
        if module is own or (
            real.startswith(tuple(roots))
            and not real.startswith(installed)
            and "-packages/" not in real
        ):
            probes.protect_module(module, mutable=_MODULE_GLOBALS_SET, grows=True)
            # and the namespaces of the classes it defines: a method replaced on the worker's
            # progress writer emptied the probes' findings from every call record
            # (tests/hostile/calls_scrub_progress_writer.py passed past the static check)
            for value in list(vars(module).values()):
                if isinstance(value, type) and value.__module__ == module.__name__:
                    probes.protect_module(value)


# module globals the project's own code reassigns after the worker started (`global` statements)
_MODULE_GLOBALS_SET = ("_warned", "_ARMED", "_active")


def _load_task(job: Job) -> Any:
    from benchmarks.loading import load_task_file

    return next(t for t in load_task_file(job.task_path) if t.dtype == job.dtype)


def run_candidate(job: CandidateJob, folder: Path, progress: _Progress) -> CandidateResult:
    """Every correctness trial of the candidate, each shipped as a trial file; then, when the
    judge answers go_perf, its timings."""
    # the timer binds torch's sync and event functions when imported: before any candidate code
    from benchmarks.harness import fallback, probes, transport
    from benchmarks.harness.fallback import TritonLaunchCounter, protect_tracers
    from profiling import time_cuda  # noqa: F401  (binds torch.cuda functions at import)

    fallback.arm_reports()  # compute ops go to the judge's pipe from here on
    counter = TritonLaunchCounter()
    counter.install()
    probes.install(compiles=job.device == "cuda")
    protect_tracers(counter)
    probes.protect(
        sys.modules[__name__],
        [
            "same_bits",
            "_time_candidate",
            "_profile_streams",
            "_launch_streams",
            "_aside",
            "_time_graph",
        ],
    )
    probes.protect(_TrialRunner, ["run", "_trial", "_call", "_launched"])
    # what ships a call's answer to the judge: a writer swapped at import could write the right
    # answer computed after the traced call (tests/hostile/calls_swap_the_trial_writer.py), and so
    # could any function below it (calls_forge_output_bytes.py, calls_forge_input_digest.py):
    # every global of the transport, and the tensor methods and functions it calls
    probes.protect_module(transport)
    # and what writes the call records and the result (tests/hostile/
    # calls_scrub_the_progress_line.py scrubbed a PyTorch fallback out of them through this
    # module's `dump`), the tracers' module and the probes themselves
    from benchmarks.harness import messages

    for module in (sys.modules[__name__], messages, fallback):
        probes.protect_module(module)
    probes.protect_module(probes, mutable=probes.REASSIGNED)
    probes.protect(transport.torch.Tensor, list(transport.TENSOR_METHODS))
    probes.protect(transport.torch, list(transport.TORCH_FUNCTIONS))
    # and everything else the worker's own code calls between a call and its shipped outputs
    # (the clones for the repeat call, `same_bits`'s comparisons, `open`, the JSON header): a
    # tensor method, torch function or builtin replaced at import ran the candidate's code
    # there (tests/hostile/calls_patch_tensor_clone.py fixed the first trial's output that way).
    # torch's own namespace is held by name only: importing torch._dynamo rebinds
    # torch.manual_seed, lawfully.
    import builtins
    import json
    import math
    import pathlib

    probes.protect_module(transport.torch.Tensor)
    probes.protect(transport.torch, ["isnan", "equal"])
    for module in (builtins, json, json.encoder, math, os):
        probes.protect_module(module, grows=True)
    for cls in (pathlib.PurePath, pathlib.Path, type(pathlib.Path())):
        probes.protect(cls, ["__truediv__", "write_text", "replace", "open", "exists"])
    # the task: its make_inputs runs here before every call, outside every probe; a wrapper put
    # around the task module's make_inputs computed each trial's answer there from the inputs
    # just made (tests/hostile/calls_patch_task_inputs_numpy.py passed past the static check),
    # and a helper it calls, a method of its class or a torch function it calls would serve as
    # well: the task object's fields, its classes, the project's modules and the task's own,
    # and torch's namespace (torch._dynamo rebinds manual_seed when imported, lawfully)
    task = _load_task(job)
    _protect_task(task, probes)
    probes.protect_module(transport.torch, mutable=("manual_seed",), grows=True)
    # and the worker's own objects: an attribute set on the trial runner (`progress`: a writer
    # that emptied the probes' findings from every call record) took over what the sealed
    # classes held (tests/hostile/calls_scrub_runner_instance.py passed past the static check)
    result = CandidateResult()
    trials = _TrialRunner(
        task, job.device, counter, folder, progress, result, job.handshake_timeout_s
    )
    probes.protect_module(trials, mutable=("calls",))
    probes.protect_module(progress)
    probes.protect_module(counter, mutable=("streams", "closed_at", "storages", "tracking"))
    # held in this frame: what the candidate replaces after its import cannot reach these
    tampered, stop, say = probes.frozen_check(fallback.ops_fd()), os._exit, os.write

    def checked(result: CandidateResult) -> CandidateResult:
        """`result`, unless the judge's code was replaced: then the process ends, status
        TAMPERED_EXIT, and nothing written through the replaced code is read as a result."""
        replaced = tampered()
        if replaced:
            say(2, ("\nreplaced: " + ", ".join(replaced[:8]) + "\n").encode())
            stop(probes.TAMPERED_EXIT)
        return result

    observed = _observed(job.device)
    if observed:
        _dry_pass(task, job)

    progress(ImportEvent())
    try:
        with probes.importing():
            cand = load_module(job.candidate_path, "kernforge_candidate")
        entry = getattr(cand, task.entry_point)
    except BaseException as exc:  # noqa: BLE001 - any failure of untrusted code is a verdict
        cls = "early_exit" if isinstance(exc, SystemExit) else "import_error"
        if isinstance(exc, probes.NativeAccessRefused):  # refused by the audit hook
            cls = "trace_evaded"
        result.fail(cls, f"importing the candidate failed: {describe(exc)}", _short_tb(exc))
        return result
    checked(result)  # replaced at import: ends here, before any input is made through it
    job = _with_input_seed(job, folder, progress, result)
    if job is None:
        return result
    bound = _Bound(task, entry, job.device)
    if observed:  # the candidate's objects built before the trials' window opens
        for shape in job.shapes:
            bound.get(shape.name, shape.dims)
        _mark()
        counter.streams = set()  # the stream of each Triton launch in the trials
    for item in trial_plan(job.shapes, job.modes, job.trials, job.seed):
        fn = bound.get(item.shape, item.dims)
        if isinstance(fn, _SetupFailure):
            result.fail(fn.error_class, fn.message, fn.traceback)
            return result
        if not trials.run(item, fn):
            return result
        checked(result)  # the records of this trial went out: through replaced code?
    aside = False  # a trial launched on a side stream: then every shape is timed device-wide
    if observed:
        _mark()
        aside = _aside(counter.streams)
        counter.streams = None
    result.launches_total = dict(counter.launches)
    if counter.ptx_features:
        from benchmarks.harness.ptx import merge_features

        result.ptx_features = merge_features(list(counter.ptx_features.values()))
    progress(CorrectnessDoneEvent())

    if not job.perf:
        return checked(result)
    answer = _wait_for(folder, ("go_perf", "stop"), job.handshake_timeout_s)
    if answer != "go_perf":
        result.perf_skipped = "judge did not ask for performance"
        return checked(result)
    try:
        result.perf = _time_candidate(
            bound, task, job, trials.gen, progress, counter, folder, aside=aside
        )
        if observed:
            _mark()
    except BaseException as exc:  # noqa: BLE001
        result.fail(
            _classify(exc, trials.calls),
            f"timing the candidate failed: {describe(exc, 1500)}",
            _short_tb(exc),
        )
    return checked(result)


def _with_input_seed(
    job: CandidateJob, folder: Path, progress: _Progress, result: CandidateResult
) -> CandidateJob | None:
    """The job with its input seed, which the judge writes to inputs.json only once this
    process says the candidate is imported: code that runs at import (or reads request.json)
    cannot regenerate the trials' inputs and compute their answers before any call is traced.
    None, with the failure in `result`, when no valid seed comes."""
    progress(ImportedEvent())
    if _wait_for(folder, ("inputs.json",), job.handshake_timeout_s) is None:
        result.fail("harness_error", "the judge wrote no inputs.json after the import")
        return None
    try:
        seed = parse_inputs((folder / "inputs.json").read_bytes()).seed
    except (OSError, MessageError) as exc:
        result.fail("harness_error", f"inputs.json: {exc}")
        return None
    return dataclasses.replace(job, seed=seed)


class _TrialRunner:
    """Runs one correctness trial at a time: makes its inputs, calls the candidate (traced and
    repeated on a shape's first trial), checks the inputs were left alone, ships the outputs."""

    def __init__(
        self,
        task: Any,
        device: str,
        counter: Any,
        folder: Path,
        progress: _Progress,
        result: CandidateResult,
        handshake_s: float = 600.0,
    ) -> None:
        import torch

        self.task, self.counter, self.folder = task, counter, folder
        self.progress, self.result = progress, result
        self.handshake_s = handshake_s  # how long the judge may take to take a trial's files
        self.gen = torch.Generator(device=device)
        self.sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
        self.calls = 0
        # On the CPU every trial's objects stay alive until the job ends: a finalizer the
        # candidate put on an input ran when the worker dropped it, outside every traced call,
        # and computed later trials' answers with PyTorch there (a red-team pass, 2026-12-08:
        # tests/hostile/calls_finalizer_between_trials.py). CPU shapes are small; on a GPU the
        # launch observer sees PyTorch's kernels wherever they run, and the memory is needed.
        self.kept: list[Any] | None = [] if device == "cpu" else None

    def run(self, item: Trial, fn: Any) -> bool:
        """Run trial `item`; False when it failed (the failure is in the result)."""
        import torch

        from benchmarks.harness import probes

        self.progress(CallEvent(n=item.n, shape=item.shape, mode=item.mode, trial=item.trial))
        # the first trial's steps carry timestamps of their own (the harness-speed timeline)
        step = self.progress if item.n == 0 else _quiet
        self.gen.manual_seed(item.seed)
        args = self.task.make_inputs(item.dims, item.mode, self.gen)
        private = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        step(FirstInputsEvent())
        with probes.shipping() as refused:  # from the first call until the outputs are shipped
            return self._trial(item, fn, step, args, private, refused)

    def _trial(
        self, item: Trial, fn: Any, step: Any, args: tuple, private: list, refused: list[str]
    ) -> bool:
        """The calls of trial `item` and the shipping of their outputs."""
        import torch

        from benchmarks.harness.transport import write_trial

        outside = 0  # Triton launches after a call returned, before its outputs were shipped
        try:
            t0 = _perf_counter()
            out, fallback = self._call(item, fn, args)
            call_s = _perf_counter() - t0
            mark = self.counter.closed_at
            self.calls += 1
            step(FirstCalledEvent())
            repeat = again = repeat_fallback = None
            if item.first:
                again = [a.clone() if isinstance(a, torch.Tensor) else a for a in private]
                outside += self._launched() - mark
                repeat, repeat_fallback = self._call(item, fn, tuple(again))
                mark = self.counter.closed_at
            step(FirstRepeatedEvent())
        except BaseException as exc:  # noqa: BLE001
            self.result.fail(
                _classify(exc, self.calls, in_call=True),
                f"the call raised on {item.where()}: {describe(exc)}",
                _short_tb(exc),
            )
            self.result.where = item
            return False
        changed = [
            i
            for i, (a, p) in enumerate(zip(args, private, strict=True))
            if isinstance(p, torch.Tensor) and (type(a) is not torch.Tensor or not _same(a, p))
        ]
        try:
            file = write_trial(self.folder, f"trial_{item.n}", out, repeat, changed, args, again)
        except Exception as exc:  # noqa: BLE001 - what the candidate returned cannot be shipped
            self.result.fail(
                "wrong_output_type",
                f"the outputs of {item.where()} could not be read (a tensor without data, on "
                f"another device, or an object that breaks when copied): {describe(exc, 600)}",
            )
            self.result.where = item
            return False
        outside += self._launched() - mark
        if refused:
            self.result.fail(
                "trace_evaded",
                "memory was reached by address through ctypes after the candidate's call had "
                f"returned and before the worker shipped its outputs, on {item.where()} (refused: "
                f"{', '.join(sorted(set(refused)))}): an output could be written there unseen",
            )
            self.result.where = item
            return False
        if outside:
            self.result.fail(
                "trace_evaded",
                f"{outside} Triton launch(es) ran after the candidate's call had returned and "
                f"before the worker shipped its outputs, on {item.where()}: code the candidate "
                "left behind (a gc callback, a finalizer, a hook) can rewrite an output there, "
                "where no tracer watches; a kernel's launches belong inside its call",
            )
            self.result.where = item
            return False
        self.progress(
            TrialEvent(
                n=item.n,
                file=file,
                call_s=round(call_s, 6),
                fallback=fallback,
                repeat_fallback=repeat_fallback,
            )
        )
        # Nothing of the candidate's runs until the judge has taken the trial's files (it reads,
        # then deletes them): the last references to the call's objects are dropped only then,
        # and the collector stays off (`probes.shipping`). A finalizer on its output ran at the
        # drop and wrote the right answer over the written bytes before the judge read them
        # (tests/hostile/calls_finalizer_rewrites_trial_numpy.py passed past the static check).
        if _wait_gone(self.folder / file, self.handshake_s) is not None:
            self.result.fail(
                "harness_error",
                f"the judge did not take the outputs of {item.where()} within "
                f"{self.handshake_s:.0f} s",
            )
            self.result.where = item
            return False
        if self.kept is not None:
            self.kept.append((out, repeat, args, private, again))
        del out, repeat, args, private, again
        return True

    def _launched(self) -> int:
        """Triton launches in this process so far (the worker launches none of its own here)."""
        return sum(self.counter.launches.values())

    def _call(self, item: Trial, fn: Any, args: tuple) -> tuple[Any, FallbackInfo]:
        """One call on poisoned fresh memory, traced (its ops, launches and probes recorded;
        a shape's first call also in the result)."""
        import torch

        from benchmarks.harness.fallback import record_call

        det = torch.utils.deterministic
        # Poison fresh allocations: torch.empty & co. come back filled with NaN (ints: max),
        # so a kernel that leaves its output unwritten fails instead of passing on stale zeros.
        old_fill = det.fill_uninitialized_memory
        _deterministic(True, warn_only=True)
        det.fill_uninitialized_memory = True
        try:
            out, info = record_call(self.counter, fn, args, self.sync)
            self.result.fallback.setdefault(item.shape, info)
            return out, info
        finally:
            _deterministic(False)
            det.fill_uninitialized_memory = old_fill


def _deterministic(mode: bool, warn_only: bool = False) -> None:
    """torch.use_deterministic_algorithms without its Inductor half: the public function also
    sets torch._inductor.config.deterministic, and importing that module imports all of
    torch._dynamo (1.6 CPU-s on the CPU machine, in every worker's first call). Only the
    dispatcher's flag matters here (it is what makes fresh allocations come back poisoned); a
    candidate compiled by Inductor is a fallback whatever that flag says."""
    import torch

    setter = getattr(torch._C, "_set_deterministic_algorithms", None)
    if setter is None:  # a PyTorch without the private setter: the public one, import and all
        torch.use_deterministic_algorithms(mode, warn_only=warn_only)
    else:
        setter(mode, warn_only=warn_only)


def _profile_streams(fn: Any, args: tuple, launched: set[str]) -> StreamProfile:
    """One call under torch.profiler: device time per kernel, and whether any kernel ran on a
    stream other than the current one.

    A marker kernel (a fill on the current stream) is launched first; its stream is the
    reference, and it is left out of the totals."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    marker = torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        marker.fill_(1.0)
        torch.cuda.synchronize()
        fn(*args)
        torch.cuda.synchronize()
    kernels = []
    for evt in prof.events():
        if getattr(evt, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        dur = float(getattr(evt, "device_time_total", 0.0) or 0.0)
        start = float(getattr(getattr(evt, "time_range", None), "start", 0.0) or 0.0)
        kernels.append((start, evt.name, dur, getattr(evt, "device_resource_id", None)))
    kernels.sort()
    if not kernels:
        return StreamProfile(
            kernel_us={},
            total_us=0.0,
            triton_us=0.0,
            triton_ratio=None,
            side_stream=False,
            note="profiler saw no kernels",
        )
    _, _, _, ref_stream = kernels[0]
    names: dict[str, float] = {}
    total = triton_time = 0.0
    side = False
    for _, kname, dur, stream in kernels[1:]:
        total += dur
        names[kname] = names.get(kname, 0.0) + dur
        if stream is not None and ref_stream is not None and stream != ref_stream:
            side = True
        if any(kname == n or kname.startswith(n) for n in launched):
            triton_time += dur
    return StreamProfile(
        kernel_us=names,
        total_us=total,
        triton_us=triton_time,
        triton_ratio=(triton_time / total) if total > 0 else None,
        side_stream=side,
    )


def _launch_streams(fn: Any, args: tuple, counter: Any) -> StreamProfile:
    """Where the launch observer watches (CUPTI takes one subscriber per process, so
    torch.profiler cannot run): one call with the stream of each Triton launch noted; a side
    stream is any but the current one. No device times. The observer's own per-stream counts
    check this from outside (observer.check)."""
    import torch

    current = torch.cuda.current_stream().cuda_stream
    torch.cuda.synchronize()
    counter.streams = set()
    try:
        fn(*args)
        torch.cuda.synchronize()
        seen = counter.streams
    finally:
        counter.streams = None
    return StreamProfile(
        kernel_us={},
        total_us=0.0,
        triton_us=0.0,
        triton_ratio=None,
        side_stream=bool(seen - {current}),
    )


def _aside(streams: set[int] | None) -> bool:
    """Whether any of `streams` (the counter's record of its Triton launches) is not the
    current stream."""
    import torch

    return bool(set(streams or ()) - {torch.cuda.current_stream().cuda_stream})


def _time_candidate(
    bound: _Bound,
    task: Any,
    job: CandidateJob,
    gen: Any,
    progress: _Progress,
    counter: Any,
    folder: Path,
    aside: bool = False,
) -> CandidatePerf:
    """Time every timed shape of `job` (per call, then decode shapes inside CUDA graphs).
    `aside`: the trials launched on a side stream, so every shape is timed device-wide (the
    launch observer counts the timing of all shapes together: a shape timed on its stream
    alone beside another's side-stream launches would read as a hidden stream)."""
    import torch

    from benchmarks.harness.after_timing import change_inputs
    from benchmarks.harness.fallback import record_call
    from benchmarks.harness.transport import write_trial
    from profiling import launch_floor_us, time_cuda

    floor = launch_floor_us()
    observed = _observed(job.device)
    shapes: dict[str, ShapeTiming] = {}
    launched = set(counter.launches)
    for shape in job.shapes:
        if not shape.timed:
            continue
        progress(PerfEvent(shape=shape.name))
        fn = bound.get(shape.name, shape.dims)  # bound during the correctness trials
        gen.manual_seed(trial_seed(job.seed, shape.name, "perf", 0))
        args = task.make_inputs(shape.dims, "standard", gen)
        # compile / autotune outside the clock, traced like every call
        _, first_call = record_call(counter, fn, args, torch.cuda.synchronize)
        before = sum(counter.launches.values())
        prof = (
            _launch_streams(fn, args, counter) if observed else _profile_streams(fn, args, launched)
        )
        per_call = sum(counter.launches.values()) - before  # launches of one steady-state call
        # no profile (CUPTI unavailable) means we cannot rule out side streams: time device-wide
        side_stream = prof.side_stream or bool(prof.note) or aside
        calls = [0]
        per_timed: dict[str, int] = {}  # launches in one timed call -> how many calls

        def timed(
            a: tuple = args,
            n: list[int] = calls,
            f: Any = fn,
            seen: dict[str, int] = per_timed,
            total: Any = counter.launches,
        ) -> Any:
            n[0] += 1
            start = sum(total.values())
            out = f(*a)
            k = str(sum(total.values()) - start)
            seen[k] = seen.get(k, 0) + 1
            return out

        before_kernels = counter.snapshot()
        before = sum(counter.launches.values())
        timing = time_cuda(timed, device_wide=side_stream)
        during = sum(counter.launches.values()) - before
        timed_kernels = sorted(counter.snapshot() - before_kernels)
        # one more call on the same tensors with one element changed: the judge checks its
        # answer (a candidate answering the timing loop from a cache returns the old one)
        change_inputs(args, job.seed, shape.name, skip=task.output_args(shape.dims))
        after_out, after_call = record_call(counter, fn, args, torch.cuda.synchronize)
        after_file = write_trial(
            folder, f"after_timing_{len(shapes)}", after_out, None, [], list(args)
        )
        # the judge takes the file before the candidate runs again (its later timed calls are
        # not probed): `judge._TrialChecker.take_after_files`
        _taken(folder / after_file, job.handshake_timeout_s)
        del after_out
        shapes[shape.name] = ShapeTiming(
            launches_per_call=per_call,
            launches_while_timed=during,
            calls_while_timed=calls[0],
            candidate_us=timing.median_us,
            p20_us=timing.p20_us,
            p80_us=timing.p80_us,
            reps=timing.reps,
            method=timing.method,
            side_stream=side_stream,
            profile=prof,
            timed_launch_counts=per_timed,
            timed_kernels=timed_kernels,
            traced_calls=[first_call, after_call],
            after_file=after_file,
        )
        del args
    if observed:  # the per-call timings' window closes; the graphs' opens
        _mark()
    # decode shapes also as served, inside a CUDA graph: after every per-call timing, so a
    # capture that goes wrong cannot cost the shapes their per-call figures
    for index, shape in enumerate(s for s in job.shapes if s.graph and s.name in shapes):
        progress(PerfEvent(shape=shape.name, graph=True))
        fn = bound.get(shape.name, shape.dims)
        graph = _time_graph(fn, task, job, shape, gen, counter, folder, index)
        shapes[shape.name] = dataclasses.replace(shapes[shape.name], graph=graph)
    return CandidatePerf(launch_floor_us=floor, shapes=shapes)


def _time_graph(
    fn: Any,
    task: Any,
    job: CandidateJob,
    shape: ShapeSpec,
    gen: Any,
    counter: Any,
    folder: Path,
    index: int,
) -> GraphTiming:
    """The candidate on `shape` timed inside a CUDA graph (benchmarks/harness/graph_timing.py):
    the capture traced like a call, then the graph replayed on inputs changed once more, its
    answer shipped for the judge to check. A capture that fails is a reason, not a failure."""
    import torch

    from benchmarks.harness.fallback import record_call
    from benchmarks.harness.graph_timing import (
        capture,
        graph_nudge,
        make_copies,
        replay,
        time_replay,
    )
    from benchmarks.harness.transport import write_trial
    from profiling import flush_bytes

    gen.manual_seed(trial_seed(job.seed, shape.name, "perf", 0))
    args = task.make_inputs(shape.dims, "standard", gen)
    copies = make_copies(args, flush_bytes(torch.cuda.current_device()))
    held: list[Any] = []

    def captured_calls() -> list[Any]:
        held.append(capture(fn, copies))
        flat: list[Any] = []
        for out in held[0].outs:
            flat.extend(out if isinstance(out, tuple | list) else [out])
        return flat

    try:
        _, traced = record_call(counter, captured_calls, (), lambda: None)
    except Exception as exc:  # noqa: BLE001 - a kernel a graph cannot hold is timed per call
        torch.cuda.synchronize()
        return GraphTiming(error=f"capture failed: {describe(exc, 300)}")
    captured = held[0]
    calls = captured.calls
    median, p20, p80, reps = time_replay(captured)
    graph_nudge(args, job.seed, shape.name, skip=task.output_args(shape.dims))
    replay(captured)
    torch.cuda.synchronize()
    after_file = write_trial(folder, f"graph_after_{index}", captured.outs[0], None, [], list(args))
    _taken(folder / after_file, job.handshake_timeout_s)
    copies.clear()
    del held[:], captured, args
    torch.cuda.empty_cache()
    return GraphTiming(
        calls=calls,
        launches=sum(traced.launches.values()),
        kernels=sorted(traced.launches),
        graph_us=median,
        p20_us=p20,
        p80_us=p80,
        reps=reps,
        after_file=after_file,
        traced=traced,
    )


# ------------------------------------------------------------------------------------------
# baseline job (trusted: the task's own reference, eager and torch.compile)
# ------------------------------------------------------------------------------------------


def run_baseline(job: BaselineJob, folder: Path, progress: _Progress) -> BaselineResult:
    """Eager and torch.compile times of the task's reference per shape, with the device peaks."""
    from benchmarks.harness.precision import full_precision

    with full_precision():  # the precision the task states, compiled and timed (no cuDNN TF32)
        return _baseline_times(job, progress)


def _baseline_times(job: BaselineJob, progress: _Progress) -> BaselineResult:
    import torch

    from profiling import get_peaks, launch_floor_us, time_cuda

    task = _load_task(job)
    result = BaselineResult()
    progress(PeaksEvent())
    peaks = get_peaks("cuda")
    result.peaks = peaks.to_dict() if hasattr(peaks, "to_dict") else dict(peaks.__dict__)
    result.launch_floor_us = launch_floor_us()
    gen = torch.Generator(device="cuda")
    compiled_by_fn: dict[Any, Any] = {}  # one torch.compile per baseline function
    for shape in job.shapes:
        progress(BaselineEvent(shape=shape.name))
        eager = task.baseline_for(shape.dims)
        if eager not in compiled_by_fn:
            compiled_by_fn[eager] = torch.compile(eager, dynamic=False)
        compiled = compiled_by_fn[eager]
        gen.manual_seed(trial_seed(job.seed, shape.name, "perf", 0))
        args = task.make_inputs(shape.dims, "standard", gen)
        eager_us = time_cuda(lambda a=args, f=eager: f(*a)).median_us
        try:
            compiled(*args)
            times = BaselineTimes(
                eager_us=eager_us,
                compile_us=time_cuda(lambda a=args, f=compiled: f(*a)).median_us,
            )
        except Exception as exc:  # noqa: BLE001 - a compile failure is reported, not fatal
            times = BaselineTimes(
                eager_us=eager_us,
                compile_us=None,
                compile_error=f"{describe(exc, 300)}",
            )
        if shape.graph:  # as served: the same method as the candidate's (graph_timing.py)
            times = _baseline_graph_times(times, eager, compiled, args)
        result.shapes[shape.name] = times
        del args
        torch.cuda.empty_cache()
    return result


def _baseline_graph_times(
    times: BaselineTimes, eager: Any, compiled: Any, args: tuple
) -> BaselineTimes:
    """`times` with eager's and torch.compile's per-call times inside a CUDA graph."""
    from benchmarks.harness.graph_timing import time_in_graph

    eager_graph_us, eager_error = time_in_graph(eager, args)
    compile_graph_us, compile_error = None, ""
    if times.compile_us is not None:
        compile_graph_us, compile_error = time_in_graph(compiled, args)
    errors = [
        f"{who}: {why}"
        for who, why in (("eager", eager_error), ("torch.compile", compile_error))
        if why
    ]
    return dataclasses.replace(
        times,
        eager_graph_us=eager_graph_us,
        compile_graph_us=compile_graph_us,
        graph_error="; ".join(errors),
    )


# ------------------------------------------------------------------------------------------
# remeasure job: two already-correct candidates, timed interleaved A B B A per round
# ------------------------------------------------------------------------------------------


def run_remeasure(job: RemeasureJob, folder: Path, progress: _Progress) -> RemeasureResult:
    """Both kernels timed incumbent, candidate, candidate, incumbent per round and shape."""
    import torch

    from profiling import time_cuda

    task = _load_task(job)
    result = RemeasureResult()
    bound = {}
    for label, path in (("incumbent", job.incumbent_path), ("candidate", job.candidate_path)):
        progress(ImportEvent(which=label))
        try:
            bound[label] = _Bound(
                task, getattr(load_module(path, f"kernforge_{label}"), task.entry_point), "cuda"
            )
        except BaseException as exc:  # noqa: BLE001
            result.fail("import_error", f"importing the {label} failed: {describe(exc)}")
            return result
    gen = torch.Generator(device="cuda")
    times: dict[str, dict[str, list[float]]] = {"incumbent": {}, "candidate": {}}
    for shape in job.shapes:
        fns = {label: b.get(shape.name, shape.dims) for label, b in bound.items()}
        failed = next((f for f in fns.values() if isinstance(f, _SetupFailure)), None)
        if failed:
            result.fail(failed.error_class, failed.message, failed.traceback)
            return result
        gen.manual_seed(trial_seed(job.seed, shape.name, "perf", 0))
        args = task.make_inputs(shape.dims, "standard", gen)
        for fn in fns.values():
            fn(*args)  # compile and autotune outside the clock
        # decode shapes as the judge scores them: inside a CUDA graph, when both kernels allow
        timers = _graph_timers(fns, args) if shape.graph else None
        if timers is None:
            timers = {label: (lambda f=fn, a=args: f(*a), 1) for label, fn in fns.items()}
        for r in range(job.rounds):
            progress(PerfEvent(shape=shape.name, round=r, graph=timers["candidate"][1] > 1))
            for label in ("incumbent", "candidate", "candidate", "incumbent"):
                call, per = timers[label]
                t = time_cuda(call, device_wide=True).median_us / per
                times[label].setdefault(shape.name, []).append(t)
        del args, timers
        torch.cuda.empty_cache()
    result.times = times
    return result


def _graph_timers(fns: dict[str, Any], args: tuple) -> dict[str, tuple[Any, int]] | None:
    """Per label, a replay of its calls captured into a CUDA graph and how many calls it holds;
    None when either kernel cannot be captured (both are then timed call by call)."""
    import torch

    from benchmarks.harness.graph_timing import capture, make_copies, replay
    from profiling import flush_bytes

    copies = make_copies(args, flush_bytes(torch.cuda.current_device()))
    timers: dict[str, tuple[Any, int]] = {}
    try:
        for label, fn in fns.items():
            captured = capture(fn, copies)
            timers[label] = (lambda c=captured: replay(c), captured.calls)
    except Exception:  # noqa: BLE001 - a kernel a graph cannot hold is re-measured per call
        torch.cuda.synchronize()
        return None
    return timers


# ------------------------------------------------------------------------------------------
# sweep job: many configurations of one kernel, timed one after another, for a ranking only
# ------------------------------------------------------------------------------------------


def run_sweep(job: SweepJob, folder: Path, progress: _Progress, timer: Any = None) -> SweepResult:
    """Every configuration of the job in turn: imported, bound per shape, called once outside
    the clock (compile), its answer compared with the reference's on the same inputs, then timed
    briefly. A configuration that fails (import, set-up, an exception, a wrong answer, inputs
    written) is recorded with a one-line reason and the next one runs; a CUDA context that breaks
    ends the job, keeping what was measured before. Nothing here is believed for a verdict: it
    all runs in the candidates' process. `timer` replaces `profiling.time_cuda` (tests on the
    CPU; it takes the call and the job)."""
    import torch

    task = _load_task(job)
    graphs = timer is None and job.device == "cuda"  # decode shapes inside CUDA graphs
    if timer is None:
        from profiling import time_cuda

        def _gpu_timer(call: Any, job: SweepJob) -> float:
            return time_cuda(
                call,
                warmup_ms=job.warmup_ms,
                rep_ms=job.rep_ms,
                max_reps=job.max_reps,
                device_wide=True,  # a configuration's side streams are timed too
            ).median_us

        timer = _gpu_timer

    result = SweepResult()
    shapes = [s for s in job.shapes if s.timed]
    # every input and every reference answer is made before any configuration is imported
    gen = torch.Generator(device=job.device)
    inputs: dict[str, tuple] = {}
    wants: dict[str, Any] = {}
    for shape in shapes:
        gen.manual_seed(trial_seed(job.seed, shape.name, "perf", 0))
        inputs[shape.name] = task.make_inputs(shape.dims, "standard", gen)
        wants[shape.name] = _reference_answer(task, shape.dims, inputs[shape.name])
    # each configuration's arguments: copies of the inputs made once and refilled per call
    # (`_refill`). A fresh clone per configuration came after the cache was emptied below, so
    # every large input was allocated from the driver again: about 0.5 s per shape of decode
    # attention's caches, most of its 2 s per configuration (H100, 2026-12-06)
    work = {name: _refill(None, args) for name, args in inputs.items()}
    for index, path in enumerate(job.config_paths):
        progress(ImportEvent(which=f"configuration {index}"))
        began, cached = time.perf_counter(), _triton_cache_entries()
        entry = _sweep_config(
            task, job, index, path, shapes, (inputs, work), wants, progress, timer, graphs
        )
        entry = dataclasses.replace(
            entry,
            seconds=round(time.perf_counter() - began, 4),
            compiled=max(0, _triton_cache_entries() - cached),
        )
        result.entries.append(entry)
        broken = _cuda_broken(job.device) if entry.error else None
        if broken:
            kept = sum(1 for e in result.entries if not e.error)
            result.fail(
                "crash",
                f"the CUDA context broke at configuration {index} ({entry.error}): {broken}; "
                f"the sweep ended there, keeping the {kept} configuration(s) measured before it",
            )
            return result
        if job.device == "cuda":
            torch.cuda.empty_cache()
    return result


def _triton_cache_entries() -> int:
    """How many kernels Triton's cache in this process holds (one folder each): a sweep counts
    what each configuration compiled here rather than found compiled ahead."""
    folder = os.environ.get("TRITON_CACHE_DIR")
    try:
        return len(os.listdir(folder)) if folder else 0
    except OSError:
        return 0


def _reference_answer(task: Any, dims: dict, args: tuple) -> tuple[Any, Any]:
    """The reference's output on a copy of `args`, and the task's error terms (or None)."""
    import torch

    from benchmarks.harness.precision import full_precision

    copy = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)
    with torch.no_grad(), full_precision():
        return task.reference_for(dims)(*copy), task.error_terms(copy)


def _refill(work: tuple | None, pristine: tuple) -> tuple:
    """`pristine`'s tensors copied into `work`'s (None: new clones), the other arguments as
    they are; a working tensor a configuration resized or restrided is cloned anew."""
    import torch

    out = []
    for i, p in enumerate(pristine):
        w = work[i] if work is not None else None
        if not isinstance(p, torch.Tensor):
            out.append(p)
        elif (
            isinstance(w, torch.Tensor)
            and w.shape == p.shape
            and w.stride() == p.stride()
            and w.dtype == p.dtype
        ):
            out.append(w.copy_(p))
        else:
            out.append(p.clone())
    return tuple(out)


def _sweep_config(
    task: Any,
    job: SweepJob,
    index: int,
    path: str,
    shapes: list[ShapeSpec],
    data: tuple[dict[str, tuple], dict[str, tuple]],
    wants: dict[str, Any],
    progress: _Progress,
    timer: Any,
    graphs: bool = False,
) -> SweepTiming:
    """One configuration of a sweep: its time per shape, or the first reason it failed. Decode
    shapes (ShapeSpec.graph) are timed per call inside a CUDA graph, as the judge scores them,
    where the configuration can be captured. `data`: the pristine inputs per shape, and the
    working copies the configuration is called on (refilled from them first)."""
    inputs, work = data
    import torch

    from benchmarks.harness.graph_timing import time_in_graph

    # phases, and "first_call:<shape>" for each shape's own first call
    spent = {"load": 0.0, "first_call": 0.0, "check": 0.0, "time": 0.0}
    mark = [time.perf_counter()]

    def lap(phase: str) -> float:  # the seconds since the last lap go to `phase` (returned)
        now = time.perf_counter()
        seconds, mark[0] = now - mark[0], now
        spent[phase] += seconds
        return seconds

    try:
        entry = getattr(load_module(path, f"kernforge_sweep_{index}"), task.entry_point)
    except BaseException as exc:  # noqa: BLE001 - a failing configuration is recorded, not fatal
        return SweepTiming(index=index, error=f"import failed: {_one_line(exc)}")
    bound = _Bound(task, entry, job.device)
    times: dict[str, float] = {}
    for shape in shapes:
        fn = bound.get(shape.name, shape.dims)
        lap("load")
        if isinstance(fn, _SetupFailure):
            return SweepTiming(index=index, error=fn.message.splitlines()[0][:300])
        progress(PerfEvent(shape=shape.name))
        pristine = inputs[shape.name]
        args = work[shape.name] = _refill(work[shape.name], pristine)
        try:
            out = fn(*args)  # compile and autotune outside the clock
            if job.device == "cuda":
                torch.cuda.synchronize()
            # per shape too: which shape's first call costs what (a compile missed, a slow path)
            spent[f"first_call:{shape.name}"] = lap("first_call")
            wrong = _sweep_mismatch(out, *wants[shape.name], task.tolerance)
            del out
            skip = set(task.output_args(shape.dims))
            written = [
                i
                for i, (a, p) in enumerate(zip(args, pristine, strict=True))
                if isinstance(p, torch.Tensor) and i not in skip and not same_bits(a, p)
            ]
            if not wrong and written:
                wrong = f"it wrote its input(s) {written}"
            if wrong:
                return SweepTiming(index=index, error=f"shape {shape.name}: {wrong}")
            lap("check")
            graph = None
            if shape.graph and graphs:  # a configuration a graph cannot hold: timed per call
                graph, _ = time_in_graph(
                    fn, args, warmup_ms=job.warmup_ms, rep_ms=job.rep_ms, max_reps=job.max_reps
                )
            times[shape.name] = graph or float(timer(lambda f=fn, a=args: f(*a), job))
            lap("time")
        except BaseException as exc:  # noqa: BLE001
            return SweepTiming(index=index, error=f"shape {shape.name}: {_one_line(exc)}")
        finally:
            del args
    return SweepTiming(
        index=index, times_us=times, phases={k: round(v, 4) for k, v in spent.items()}
    )


def _sweep_mismatch(got: Any, want: Any, scale: Any, tolerance: Any) -> str | None:
    """Why `got` is not the reference's answer `want` within the task's tolerance, or None. A
    cheap check for ranking (the judge's own comparison runs in the judge, on shipped outputs):
    types, shapes, dtypes, where the non-finite values are, and closeness."""
    import torch

    gots = list(got) if isinstance(got, tuple | list) else [got]
    wants = list(want) if isinstance(want, tuple | list) else [want]
    scales = list(scale) if isinstance(scale, tuple | list) else [scale] * len(wants)
    if len(gots) != len(wants):
        return f"returned {len(gots)} output(s), expected {len(wants)}"
    for i, (g, w) in enumerate(zip(gots, wants, strict=True)):
        w = w if isinstance(w, torch.Tensor) else torch.as_tensor(w)
        if type(g) is not torch.Tensor:
            return f"output {i} is a {type(g).__name__}, not a tensor"
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"output {i} is {g.dtype} {tuple(g.shape)}, expected {w.dtype} {tuple(w.shape)}"
        a, b = g.detach().double(), w.detach().to(g.device).double()
        finite = torch.isfinite(b)
        if not torch.equal(torch.isfinite(a), finite) or not bool(
            ((a == b) | (torch.isnan(a) & torch.isnan(b)))[~finite].all()
        ):
            return f"output {i}: NaN or Inf where the reference has none, or the reverse"
        a, b = a[finite], b[finite]
        if not a.numel():
            continue
        if tolerance.is_quant:
            diff = a - b
            cosine = float(torch.nn.functional.cosine_similarity(a, b, dim=0))
            rel_l1 = float(diff.abs().sum() / b.abs().sum().clamp_min(1e-30))
            rmse = float(diff.pow(2).mean().sqrt())
            if cosine < tolerance.cosine or rel_l1 > tolerance.rel_l1 or rmse > tolerance.rmse:
                return f"output {i}: cosine {cosine:.5f}, rel L1 {rel_l1:.3g}, RMSE {rmse:.3g} outside the task's contract"
            continue
        bound = (tolerance.atol or 0.0) + (tolerance.rtol or 0.0) * b.abs()
        s = scales[i] if i < len(scales) else None
        if isinstance(s, torch.Tensor) and tuple(s.shape) == tuple(w.shape) and tolerance.terms:
            bound = bound + tolerance.terms * s.detach().to(g.device).double()[finite]
        excess = (a - b).abs() - bound
        if bool((excess > 0).any()):
            return f"output {i}: off by up to {float((a - b).abs().max()):.3g} (beyond the task's tolerance)"
    return None


def _one_line(exc: BaseException) -> str:
    """'Name: first line of the message', cut to a readable length."""
    name, _, text = describe(exc, 10_000).partition(": ")
    lines = text.strip().splitlines()
    return f"{name}: {lines[0][:300] if lines else ''}".rstrip(": ")


def _cuda_broken(device: str) -> str | None:
    """Why this process's CUDA context no longer works (an illegal access is sticky), or None."""
    if device != "cuda":
        return None
    import torch

    try:
        torch.cuda.synchronize()
        torch.empty(1, device="cuda").add_(1)
        torch.cuda.synchronize()
    except BaseException as exc:  # noqa: BLE001 - a broken context raises anything
        return _one_line(exc)
    return None


def _warm_up(device: str, folder: Path) -> None:
    """Pay, before any request arrives, the one-time costs of a fresh process that are not the
    candidate's: Triton's driver and launcher set-up (a trusted kernel of our own), the CUDA
    random generator, operator dispatch under a TorchDispatchMode, a trial file written and read.
    It makes a fresh worker's first call several times faster on a GPU
    (docs/results/design_measurements.md, "Worker warm-up")."""
    import torch

    from benchmarks.harness.fallback import AtenRecorder
    from benchmarks.harness.transport import read_trial, write_trial
    from benchmarks.harness.warmup_kernel import copy_scaled

    gen = torch.Generator(device=device)
    gen.manual_seed(0)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        x = torch.randn(4096 + 3, device=device, generator=gen).to(dtype)
        with AtenRecorder():
            y = copy_scaled(x)
            torch.add(x, 1)
        if device == "cuda":
            torch.cuda.synchronize()
        name = write_trial(folder, "warmup", y, None, [])
        read_trial(folder / name, device)
    if device == "cuda":
        try:
            _warm_up_timing(x)
        except Exception:  # noqa: BLE001 - only a head start: the perf stage pays these itself
            torch.cuda.synchronize()
    if _observed(device):
        _observer_digest_window(x)


def _observed(device: str) -> bool:
    """Whether the launch observer (benchmarks/harness/observer) watches this process."""
    return device == "cuda" and bool(os.environ.get(OBSERVER_FD_ENV))


def _mark() -> None:
    """Close the launch observer's current window (benchmarks/harness/observer)."""
    import torch

    from benchmarks.harness.warmup_kernel import observer_marker

    torch.cuda.synchronize()
    observer_marker()


def _observer_digest_window(x: Any) -> None:
    """Close the warm-up's window, then show the observer the kernels the digests of shipped
    tensors launch (on 64-bit words; an unaligned length pads first) in a window of their own:
    their number in a trial depends on the candidate's outputs, so they are allowed by name."""
    import torch

    from benchmarks.harness.transport import _same_bytes, digest, new_key

    _mark()
    for t in (x, x[1:], torch.zeros(5, dtype=torch.uint8, device=x.device), x.double()):
        digest(t, new_key())
        _same_bytes(t, t.clone())
    _mark()


def _dry_pass(task: Any, job: CandidateJob) -> None:
    """What the worker itself launches in the correctness trials, done once more before the
    candidate is imported, in a window of the launch observer's own: each trial's inputs made,
    kept and compared as `_TrialRunner.run` does (the same plan; the input seed does not change
    which kernels make them). The judge subtracts these counts from the trials'.

    Before it, in the window that loading the task opened (judged by nobody, allowed nowhere),
    each shape's inputs are made once in every mode: a task's one-time work (a TritonBench file
    runs its tests to record the calls, comparisons included, when first loaded; a cache filled
    by the first `make_inputs`) would otherwise count in the dry pass once and in the trials
    never, as launches the trials missed."""
    import torch

    gen = torch.Generator(device=job.device)
    for shape in job.shapes:
        for mode in job.modes:
            gen.manual_seed(0)
            task.make_inputs(shape.dims, mode, gen)
    _mark()
    for item in trial_plan(job.shapes, job.modes, job.trials, 0):
        gen.manual_seed(item.seed)
        args = task.make_inputs(item.dims, item.mode, gen)
        private = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        if item.first:
            again = [a.clone() if isinstance(a, torch.Tensor) else a for a in private]
            del again
        for a, p in zip(args, private, strict=True):
            if isinstance(p, torch.Tensor) and type(a) is torch.Tensor:
                same_bits(a, p)
        del args, private
    _mark()


def _warm_up_timing(x: Any) -> None:
    """The perf stage's one-time costs in a fresh process, paid here, before the candidate is
    imported: the launch floor (an empty kernel compiled and timed: cached for the process, so
    the candidate's timing reuses it, and the candidate cannot have touched it), the profiler's
    CUDA tracing (CUPTI's start-up in a process is slow the first time), the clock's L2-flush
    buffer and one CUDA graph captured and replayed. Measured on the H200 on 2026-12-03 before
    this existed: 6.2 s of a new silu candidate's 12.2 s judge were its perf stage
    (docs/results/throughput_h200_2026-12-03b.md)."""
    import torch

    from benchmarks.harness.warmup_kernel import copy_scaled
    from profiling import launch_floor_us, time_cuda

    launch_floor_us()
    if not _observed("cuda"):  # under the launch observer the profiler cannot start (one CUPTI
        _profile_streams(copy_scaled, (x,), set())  # subscriber per process)
    time_cuda(lambda: copy_scaled(x), warmup_ms=1.0, rep_ms=1.0, min_reps=2, max_reps=2)
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        copy_scaled(x)  # the first call of a captured function outside the capture
    torch.cuda.current_stream().wait_stream(stream)
    with torch.cuda.graph(graph):
        copy_scaled(x)
    graph.replay()
    torch.cuda.synchronize()
    del graph


def serve(
    folder: Path,
    device: str,
    progress: _Progress,
    idle_limit_s: float = 3600.0,
    parent: int | None = None,
) -> Path | None:
    """Import everything a job needs, then wait for `request.json` to appear in `folder`.

    Returns its path, or None when the judge went away (parent changed) or nothing came."""
    preload()
    import torch

    if device == "cuda":
        torch.cuda.init()
        torch.empty(1, device="cuda")
    _warm_up(device, folder)
    progress(ReadyEvent())
    # the judge passes its pid: a judge that died while we were still importing would otherwise
    # leave us waiting for an hour under whichever process adopted us
    parent = parent if parent is not None else os.getppid()
    ready = _perf_counter()
    deadline = ready + idle_limit_s
    path = folder / "request.json"
    while (now := _perf_counter()) < deadline:
        if path.exists():
            return path
        if os.getppid() != parent:
            return None
        # every 2 ms for a second (a request right behind the last), then every 10 ms: an idle
        # spare's looks cost ~4 % of a core at 2 ms, ~1 % at 10 ms, for at most 10 ms of latency
        _sleep(0.002 if now - ready < 1.0 else 0.01)
    return None


def preload() -> None:
    """What a worker imports before it says it is ready: torch, Triton, the judge's recorders,
    the task loader and the timer (which binds torch.cuda functions at import), and under the
    Triton interpreter the patch that rounds fp32 -> bf16 as the GPU does. Called by `serve`
    and a one-shot `main`, and once by a fork server (`benchmarks.harness.forkserver`) for all its workers."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        from benchmarks.harness.interp_rounding import patch

        patch()
    import torch  # noqa: F401
    import triton  # noqa: F401

    import benchmarks.harness.fallback  # noqa: F401
    import benchmarks.task  # noqa: F401
    from profiling import time_cuda  # noqa: F401


def main(argv: list[str]) -> int:
    if argv[1] == "--serve":  # `serve` preloads
        folder = Path(argv[2])
        judge = int(argv[4]) if len(argv) > 4 else None
        if judge is not None:  # unisolated (no sandbox to die with the judge): die with it anyway
            from benchmarks.harness.sentinel import guard

            if not guard(judge):
                return 0
        return serve_one(folder, argv[3], parent=judge)
    preload()
    req_path = Path(argv[1])
    folder = req_path.parent
    progress = _Progress(folder)
    return _answer(req_path, folder, progress)


def serve_one(folder: Path, device: str, parent: int | None = None) -> int:
    """Serve mode: get ready, wait for the one request in `folder`, run it and write its result
    (also the body of a worker forked from `benchmarks.harness.forkserver`). The exit code."""
    progress = _Progress(folder)
    req_path = serve(folder, device, progress, parent=parent)
    if req_path is None:
        return 0
    return _answer(req_path, folder, progress)


def _answer(req_path: Path, folder: Path, progress: _Progress) -> int:
    progress(StartEvent(pid=os.getpid(), protocol=PROTOCOL_VERSION))
    result = _run_job(req_path, folder, progress)
    tmp = folder / "result.json.tmp"
    tmp.write_text(dump(result))
    tmp.replace(folder / "result.json")
    progress(DoneEvent())
    return 0


def _take_seeded_cache(folder: Path) -> None:
    """Copy the Triton cache the judge seeded into `folder/.triton/cache` (kernels compiled ahead
    for this candidate by the executor's CPU stage) into this worker's own cache folder, which
    sits on the sandbox's private tmpfs (`sandbox.worker_env`) and so cannot be seeded from
    outside. Nothing to copy when nothing was seeded or the folders are one.

    No shared object is taken (where the folders are one, none is left): the seed was compiled
    in a process that ran the candidate's code, and a Triton launcher found in the cache is
    loaded as native code (benchmarks/harness/native.py trusts the cache's shared objects at
    install as the worker's own builds). The worker builds its launchers itself."""
    import shutil

    from benchmarks.harness.native import SHARED_SUFFIXES

    seeded = folder / ".triton" / "cache"
    mine = os.environ.get("TRITON_CACHE_DIR")
    if not seeded.is_dir() or not mine:
        return
    if Path(mine).resolve() == seeded.resolve():
        for path in seeded.rglob("*"):
            if path.name.endswith(SHARED_SUFFIXES) and not path.is_dir():
                path.unlink()
        return
    shutil.copytree(
        seeded,
        mine,
        dirs_exist_ok=True,
        ignore=lambda _, names: [n for n in names if n.endswith(SHARED_SUFFIXES)],
    )


def _run_job(req_path: Path, folder: Path, progress: _Progress) -> JobResult:
    """The job in `req_path`, run; its result, or a harness error when the job is malformed or
    the worker itself failed."""
    try:
        job = parse_job(req_path.read_bytes())
    except MessageError as exc:
        result = JobResult()
        result.fail("harness_error", f"malformed request.json: {exc}")
        return result
    try:
        if isinstance(job, CandidateJob):
            _take_seeded_cache(folder)
            return run_candidate(job, folder, progress)
        if isinstance(job, BaselineJob):
            return run_baseline(job, folder, progress)
        if isinstance(job, SweepJob):
            _take_seeded_cache(folder)  # every configuration's kernels, compiled ahead on CPUs
            return run_sweep(job, folder, progress)
        return run_remeasure(job, folder, progress)
    except BaseException as exc:  # noqa: BLE001 - report, never die silently
        result = result_type(job)()
        result.fail("harness_error", f"worker failed: {describe(exc)}", _short_tb(exc))
        return result


if __name__ == "__main__":
    # exit without running candidate-registered atexit hooks or finalisers
    code = main(sys.argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
