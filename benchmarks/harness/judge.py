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

import hashlib
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from benchmarks.harness import perf as perf_stage
from benchmarks.harness import sandbox
from benchmarks.harness.child import Child, acquire, default_root, signal_name
from benchmarks.harness.compare import bitwise_equal, compare_outputs
from benchmarks.harness.precision import full_precision
from benchmarks.harness.static_check import check_source
from benchmarks.harness.transport import TransportError, read_trial
from benchmarks.harness.worker import trial_plan
from benchmarks.task import Task
from benchmarks.verdict import ErrorClass, Mismatch, ShapeResult, Stage, Verdict, stage_before

BF16_DOT_SKIP = (
    "numerical comparison skipped on CPU: bf16 tl.dot is wrong in the Triton interpreter"
)
BF16_MATH_SKIP = (
    "numerical comparison skipped on CPU: the Triton interpreter computes bf16 arithmetic wrongly, "
    "and this kernel does not upcast to float32 before computing"
)


FP8_CAST_SKIP = (
    "numerical comparison skipped on CPU: the Triton interpreter rounds fp32 -> fp8 e4m3 casts wrongly "
    "(ties away from zero, lost carries), and this kernel casts to fp8"
)


def cpu_fp8_soft_skip(device: str, source: str) -> str | None:
    """For kernels that cast to fp8 on the CPU: a numerical mismatch is reported as skipped (the
    interpreter's cast is wrong), never as a failure; a match still counts as checked."""
    if device == "cpu" and "float8" in source:
        return FP8_CAST_SKIP
    return None


def cpu_numeric_skip(device: str, dtype: str, source: str) -> str | None:
    """Why the CPU interpreter cannot check this candidate's numbers, or None when it can.

    The interpreter gets bf16 wrong: `tl.dot` on bf16 and plain bf16 arithmetic (it operates on
    the raw bits). A bf16 kernel is checked numerically on the CPU only when it has no `dot` and
    upcasts (mentions float32); otherwise its numbers are "skipped on CPU", never passed or
    failed on them. Shapes, dtypes, NaN placement aside, fallback and input checks still apply."""
    if device != "cpu" or dtype != "bf16":
        return None
    if re.search(r"\bdot\s*\(", source):
        return BF16_DOT_SKIP
    if "float32" not in source:
        return BF16_MATH_SKIP
    return None


@dataclass
class JudgeConfig:
    device: str = "auto"  # "cpu" (Triton interpreter), "cuda", or "auto"
    trials: int = 5  # per mode, fresh seed each
    seed: int = 0
    timeout_s: float = 300.0  # for the whole candidate process
    perf: bool = True  # time it when a GPU is present
    modes: tuple[str, ...] | None = None  # default: the task's modes
    shapes: tuple[str, ...] | None = None  # default: all shapes for the device
    keep_dir: bool = False  # keep the child's folder (for debugging)
    prewarm: bool = True  # start the next worker process while this one runs
    work_root: Path | None = None
    # who wrote the candidate: True for this project's own kernels (offline generator, knowledge
    # base, the test suite's files), which may run unisolated, with a warning, where no OS
    # isolation exists; False (model-written, imported, `kernforge eval`) refuses them there
    trusted: bool = False
    # UNSAFE: run untrusted candidates with no OS isolation where none is available
    allow_unisolated: bool = False


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
    verdict = _evaluate_once(task, candidate, config, source=source, label=label)
    if "worker_lost" in verdict.flags:
        verdict = _evaluate_once(task, candidate, config, source=source, label=label)
        verdict.flags.append("worker_retried")
    return verdict


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
    if source is None:
        source = Path(candidate).read_text()
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

    # -- static ---------------------------------------------------------------------------
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

    shapes = [
        s for s in task.shapes_for(device) if config.shapes is None or s.name in config.shapes
    ]
    if not shapes:
        return _fail(
            verdict, ErrorClass.HARNESS_ERROR, f"no shapes selected for {device}", Stage.COMPILE
        )
    modes = list(config.modes or task.modes)
    soft_skip = cpu_fp8_soft_skip(device, source)
    skip_reason = cpu_numeric_skip(device, task.dtype, source)
    skip_numeric = skip_reason is not None
    if skip_reason:
        verdict.skipped.append(skip_reason)

    refused = sandbox.refusal(trusted=config.trusted, allow_unisolated=config.allow_unisolated)
    if refused:
        return _fail(verdict, ErrorClass.HARNESS_ERROR, refused, Stage.COMPILE)
    child = acquire(device, _work_root(config), prewarm=config.prewarm, isolate=True)
    folder = child.folder
    try:
        (folder / "candidate.py").write_text(source)
        want_perf = config.perf and device == "cuda"
        request = {
            "job": "candidate",
            "task_path": child.stage(task.path),
            "dtype": task.dtype,
            "candidate_path": str(folder / "candidate.py"),
            "device": device,
            "shapes": [{"name": s.name, "dims": s.dims} for s in shapes],
            "modes": modes,
            "trials": config.trials,
            "seed": config.seed,
            "perf": want_perf,
        }
        verdict = _run_candidate(
            verdict, task, child, request, device, shapes, config, skip_numeric, soft_skip
        )
    finally:
        child.kill()
        if not config.keep_dir:
            shutil.rmtree(folder, ignore_errors=True)
        if device == "cuda":
            # give the reference's and the outputs' memory back: judges running side by side (a
            # bench, `solutions_table --jobs`) otherwise each keep the largest task's worth cached
            torch.cuda.empty_cache()
    if task.estimated_costs:
        _fill_estimated_costs(verdict, task)
    verdict.stage_seconds["total"] = time.perf_counter() - t_start
    return verdict


def _run_candidate(
    verdict: Verdict,
    task: Task,
    child: Child,
    request: dict,
    device: str,
    shapes: list,
    config: JudgeConfig,
    skip_numeric: bool,
    soft_skip: str | None = None,
) -> Verdict:
    folder = child.folder
    plan = {
        p["n"]: p
        for p in trial_plan(request["shapes"], request["modes"], request["trials"], request["seed"])
    }
    by_shape: dict[str, ShapeResult] = {
        s.name: ShapeResult(
            shape=s.name,
            dims=s.dims,
            dtype=task.dtype,
            weight=s.weight,
            phase=s.phase if device == "cuda" else "cpu",
        )
        for s in shapes
    }
    state = _TrialState()
    t0 = time.perf_counter()
    deadline = t0 + config.timeout_s
    child.submit(request)
    gen = torch.Generator(device=device)
    answered = False

    def handle(evt: dict) -> None:
        nonlocal answered
        kind = evt.get("event")
        if kind == "trial" and state.failure is None:
            item = plan[evt["n"]]
            if item["n"] == 0:
                verdict.stage_seconds["first_call"] = time.perf_counter() - t0
            state.failure, nd = _check_trial(
                task, folder / evt["file"], item, gen, by_shape[item["shape"]], skip_numeric
            )
            if (
                state.failure
                and soft_skip
                and state.failure[0] in (ErrorClass.NUMERICAL_MISMATCH, ErrorClass.NAN_INF_MISMATCH)
            ):
                if not any(note.startswith(soft_skip) for note in verdict.skipped):
                    verdict.skipped.append(
                        f"{soft_skip} (first mismatch: {state.failure[1][:300]})"
                    )
                state.failure = None
            state.compared += 1
            if nd == "bits":
                state.nondet_note = f"repeat call on shape {item['shape']} differed in the last bits (within tolerance)"
            elif nd:
                state.pending_nondet = state.pending_nondet or nd
            if evt.get("fallback") is not None:
                state.fallback[item["shape"]] = evt["fallback"]
        elif kind == "correctness_done" and not answered:
            answered = True
            verdict.stage_seconds["correctness"] = time.perf_counter() - t0
            go = (
                state.failure is None
                and state.pending_nondet is None
                and not _fallback_failure(state.fallback)
            )
            (folder / ("go_perf" if go and request["perf"] else "stop")).touch()

    try:
        while state.failure is None:
            for evt in child.poll_events():
                handle(evt)
            if state.failure is not None:
                break
            if child.proc.poll() is not None:
                for evt in child.poll_events():  # lines written just before the exit
                    handle(evt)
                break
            if time.perf_counter() > deadline:
                step = child.last_step()
                child.kill()
                return _fail(
                    verdict,
                    ErrorClass.TIMEOUT,
                    f"the candidate process ran past the {config.timeout_s:.0f} s limit {step} and was killed",
                    Stage.CALL,
                )
            time.sleep(0.005)
    except BaseException:
        child.kill()
        raise
    if state.failure is not None:
        child.kill()
    child.wait(5)
    verdict.stage_seconds["child"] = time.perf_counter() - t0
    verdict.stage_seconds.update(_child_timeline(child.events))

    if state.failure:
        error, message, stage, mismatch = state.failure
        verdict.mismatch = mismatch
        verdict.shapes = list(by_shape.values())
        return _fail(verdict, error, message, stage)
    compared, pending_nondet, fallback = state.compared, state.pending_nondet, state.fallback

    result = child.result()
    if result is None:
        code = child.returncode()
        step = child.last_step()
        tail = child.stderr_tail()
        if not any(evt.get("event") == "import" for evt in child.events):
            # the worker died in its own set-up, before any candidate code ran (out of memory at
            # CUDA start-up, say): the judge's failure, never the candidate's
            verdict.flags.append("worker_lost")
            return _fail(
                verdict,
                ErrorClass.HARNESS_ERROR,
                f"the worker process exited with code {code} before the candidate was imported (not the candidate's fault). stderr: {tail[-600:]}",
                Stage.COMPILE,
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
    if result.get("status") == "error":
        error = ErrorClass(result.get("error_class", "harness_error"))
        where = result.get("where")
        stage = {
            ErrorClass.IMPORT_ERROR: Stage.COMPILE,
            ErrorClass.COMPILE_ERROR: Stage.COMPILE,
            ErrorClass.PARAMETER_MISMATCH: Stage.COMPILE,
        }.get(error, Stage.CALL)
        if error == ErrorClass.HARNESS_ERROR:
            verdict.flags.append("harness_error")
        if compared < len(plan) or where:
            return _fail(verdict, error, result.get("message", ""), stage)
        # failure while timing, after correctness passed
        verdict.flags.append("perf_failed")
        verdict.perf_status = f"failed: {result.get('message', '')}"
    if compared < len(plan):
        return _fail(
            verdict,
            ErrorClass.HARNESS_ERROR,
            f"the worker returned after {compared} of {len(plan)} trials",
            Stage.CALL,
        )

    verdict.triton_launches = dict(result.get("launches_total", {}))
    features = result.get("ptx_features")
    if isinstance(features, dict) and all(
        isinstance(k, str) and isinstance(v, bool) for k, v in features.items()
    ):
        verdict.ptx_features = features
    verdict.stage_reached = (
        Stage.CORRECT_OUTLIER
        if any(m != "standard" for m in request["modes"])
        else Stage.CORRECT_STANDARD
    )
    if pending_nondet:
        return _fail(verdict, ErrorClass.NONDETERMINISTIC, pending_nondet, Stage.DETERMINISTIC)
    if state.nondet_note:
        verdict.flags.append("nondeterministic_bits")
    verdict.stage_reached = Stage.DETERMINISTIC

    ops: dict[str, int] = {}
    for info in fallback.values():
        for name, n in info.get("all_ops", {}).items():
            ops[name] = ops.get(name, 0) + n
    verdict.aten_ops = ops
    fb = _fallback_failure(fallback)
    if fb:
        verdict.fallback_ops = sorted(
            {op for info in fallback.values() for op in info.get("compute_ops", {})}
        )
        return _fail(verdict, ErrorClass.FALLBACK, fb, Stage.NO_FALLBACK)
    verdict.stage_reached = Stage.NO_FALLBACK
    verdict.passed = True
    verdict.shapes = list(by_shape.values())

    if device != "cuda":
        verdict.perf_status = "not measured (no GPU)"
        return verdict
    if not request["perf"]:
        verdict.perf_status = "not measured (perf off)"
        return verdict
    if result.get("perf"):
        t1 = time.perf_counter()
        perf_stage.fill_perf(verdict, task, shapes, result["perf"], config)
        verdict.stage_seconds["perf"] = (
            time.perf_counter() - t1 + verdict.stage_seconds.get("perf", 0.0)
        )
    return verdict


def _fill_estimated_costs(verdict: Verdict, task: Task) -> None:
    """FLOPs and bytes per shape for tasks whose costs are measured estimates (imported formats),
    also where no perf stage ran (on the CPU); the verdict's notes say they are estimates."""
    for sr in verdict.shapes:
        if sr.flops is None:
            sr.flops, sr.bytes = task.flops(sr.dims), task.min_bytes(sr.dims)


def _child_timeline(events: list[dict]) -> dict[str, float]:
    """Seconds the child spent importing the candidate, in its first call (compile, op tracing),
    in the remaining trials, and timing — from the timestamps on its progress lines."""
    first: dict[str, float] = {}
    for evt in events:
        if "t" in evt and evt.get("event") not in first:
            first[evt["event"]] = float(evt["t"])
    spans = {
        "child_import": ("import", "call"),
        "child_first_call": ("call", "trial"),
        "child_first_inputs": ("call", "first_inputs"),
        "child_first_fn": ("first_inputs", "first_called"),
        "child_first_repeat": ("first_called", "first_repeated"),
        "child_first_ship": ("first_repeated", "trial"),
        "child_trials": ("trial", "correctness_done"),
        "child_perf": ("correctness_done", "done"),
    }
    return {
        name: first[b] - first[a] for name, (a, b) in spans.items() if a in first and b in first
    }


@dataclass
class _TrialState:
    failure: tuple[ErrorClass, str, Stage, Mismatch | None] | None = None
    compared: int = 0
    pending_nondet: str | None = None
    nondet_note: str | None = None
    fallback: dict[str, dict] = field(default_factory=dict)


def _fallback_failure(fallback: dict[str, dict]) -> str | None:
    from benchmarks.harness.fallback import verdict_for

    for shape, info in fallback.items():
        msg = verdict_for(
            info.get("compute_ops", {}), info.get("launches", {}), info.get("output_problems")
        )
        if msg:
            return f"{msg} (shape {shape})"
    return None


def _check_trial(
    task: Task,
    path: Path,
    item: dict,
    gen: torch.Generator,
    shape_result: ShapeResult,
    skip_numeric: bool,
) -> tuple[tuple[ErrorClass, str, Stage, Mismatch | None] | None, str | None]:
    """Compare one trial's outputs with the reference. Returns (failure, nondeterminism)."""
    stage = _correctness_stage(item["mode"])
    where = f"shape {item['shape']} {item['dims']}, mode {item['mode']}, trial {item['trial']} (seed {item['seed']})"
    try:
        payload = read_trial(path, str(gen.device))
    except TransportError as exc:  # the candidate's process wrote something we cannot read
        return (
            ErrorClass.WRONG_OUTPUT_TYPE,
            f"outputs on {where} could not be read back: {exc}",
            stage,
            None,
        ), None
    if payload.get("mutated"):
        return (
            ErrorClass.INPUT_MUTATED,
            f"the candidate modified input(s) {payload['mutated']} on {where}; inputs are read-only",
            stage,
            None,
        ), None
    gen.manual_seed(item["seed"])
    args = task.make_inputs(item["dims"], item["mode"], gen)
    with torch.no_grad(), full_precision():
        want = task.reference_for(item["dims"])(*args)
        scale = task.error_terms(args)
    got = payload["out"]
    tol = task.tolerance
    cmp = compare_outputs(got, want, tol, scale)
    if not cmp.ok and not (
        skip_numeric
        and cmp.error_class in (ErrorClass.NUMERICAL_MISMATCH, ErrorClass.NAN_INF_MISMATCH)
    ):
        shape_result.notes.append(f"first failure at {where}")
        return (cmp.error_class, f"{cmp.message} [{where}]", stage, cmp.mismatch), None
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
        if not bitwise_equal(repeat, got):
            again = compare_outputs(repeat, got if cmp.ok else want, tol, scale)
            nondet = (
                "bits"
                if again.ok
                else f"a repeat call on the same inputs disagreed with the first ({again.message}) [{where}]"
            )
    return None, nondet
