"""The performance and roofline stages, filled in after a candidate passed correctness on a GPU.

Baselines (the task's reference run eagerly and under `torch.compile`) and the device peaks are
measured by a trusted worker process — never in the candidate's process — once per task, shape,
dtype, device and software versions, and reused from this process's memory or the disk cache
(`benchmarks.harness.baselines`), so a run and a bench compare every candidate and method
against the same numbers; each shape's result says where its baseline came from and when.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchmarks.harness import baselines
from benchmarks.harness.child import run_job
from benchmarks.harness.graph_timing import wants_graph
from benchmarks.harness.messages import BaselineJob, ShapeSpec, to_dict
from benchmarks.task import Shape, Task
from benchmarks.verdict import ShapeResult, Verdict
from profiling import Peaks, roofline

_FINGERPRINTS: dict[str, dict] = {}

# Tasks whose work runs on tensor cores use the matmul peak of their dtype; everything else is
# bounded by the vector (CUDA-core fp32) rate. A task file may say so with PEAK = "matmul".
MATMUL_CATEGORIES = ("matmul", "attention", "convolution")


def fingerprint(device: str) -> dict:
    if device not in _FINGERPRINTS:
        from profiling import device_fingerprint

        _FINGERPRINTS[device] = device_fingerprint(device)
    return _FINGERPRINTS[device]


def measure_baselines(
    task: Task,
    shapes: list[Shape],
    seed: int,
    timeout_s: float = 900.0,
    work_root: Path | None = None,
) -> dict:
    """Eager and torch.compile times of `shapes`, with the device peaks, measured now by a
    trusted baseline worker (the result as a dict; its status says whether it worked)."""
    job = BaselineJob(
        task_path=str(task.path),
        dtype=task.dtype,
        device="cuda",
        shapes=[
            ShapeSpec(name=s.name, dims=dict(s.dims), graph=wants_graph(s.phase)) for s in shapes
        ],
        seed=seed,
    )
    return to_dict(run_job("cuda", job, timeout_s=timeout_s, root=work_root))


def run_baseline(
    task: Task,
    shapes: list[Shape],
    seed: int,
    timeout_s: float = 900.0,
    work_root: Path | None = None,
    cache: str = "",
) -> dict:
    """Eager and torch.compile times for each shape, plus the device peaks: from the baseline
    cache (`cache` is `JudgeConfig.baseline_cache`), measured for the shapes it lacks."""
    return baselines.baselines_for(
        task,
        shapes,
        seed,
        fingerprint("cuda"),
        baselines.BaselineStore(baselines.cache_folder(cache)),
        lambda missing: measure_baselines(task, missing, seed, timeout_s, work_root),
    )


def peak_flops_for(task: Task, peaks: Peaks) -> tuple[float | None, float | None, str]:
    """The compute ceiling for this task: (FLOP/s used for attainment, the datasheet's, label).

    Tensor-core tasks (matmul, attention, convolution, or PEAK = "matmul" in the task file) use
    the matmul rate of their dtype (ROOFLINE_DTYPE overrides, e.g. "int8" for a W8A8 GEMM); all
    others the fp32 vector rate, since elementwise work cannot use tensor cores."""
    kind = task.peak_kind() or ("matmul" if task.category in MATMUL_CATEGORIES else "vector")
    if kind == "matmul":
        dtype = getattr(task.module, "ROOFLINE_DTYPE", None) or task.dtype
        value, source = peaks.flops_for(dtype)
        return value, peaks.datasheet_flops_per_s.get(dtype), f"{dtype} matmul, {source}"
    sheet = peaks.datasheet_flops_per_s.get("fp32")
    if sheet:
        return sheet, sheet, f"fp32 vector, datasheet ({peaks.datasheet_name})"
    value, source = peaks.flops_for("fp32")
    return value, None, f"fp32 (no vector rate on record; matmul {source})"


def launch_mismatch(per_call: int | None, during: int | None, calls: int | None) -> str | None:
    """Why a timing cannot be trusted because fewer kernels ran while it was taken, or None.

    A candidate that notices it is being called again on the same inputs (the timing loop does
    exactly that) and skips its kernels would otherwise be timed doing nothing."""
    if per_call is None or during is None or not calls:
        return None
    if per_call == 0:
        return "no Triton kernel ran in the profiled call before timing"
    if during < per_call * calls:
        return f"{during} Triton launches in {calls} timed calls, but one call launches {per_call}: the candidate skipped work while it was timed"
    return None


def roofline_fields(
    flops: float, nbytes: float, measured_us: float, peak_flops: float, bandwidth: float
) -> dict[str, float]:
    """roofline_us, attainment, IOU and MFU of one measured time (profiling/roofline.py)."""
    t_meas = measured_us * 1e-6
    t_roof = roofline.roofline_time_s(flops, nbytes, peak_flops, bandwidth)
    return {
        "roofline_us": t_roof * 1e6,
        "attainment": roofline.attainment(t_roof, t_meas),
        "iou": roofline.iou(nbytes, t_meas, bandwidth),
        "mfu": roofline.mfu(flops, t_meas, peak_flops),
    }


def choose_timing(sr: ShapeResult, graph: dict | None, base: dict, asked: bool) -> None:
    """Keep both figures of a shape (call by call, and inside a CUDA graph where it was asked),
    and set the times the score uses: the graph's where the candidate, eager and torch.compile
    (unless torch.compile failed outright) all have one, else every method's per-call time.
    `sr.candidate_us`, `eager_us` and `compile_us` hold the per-call times when this is called."""
    sr.call_us, sr.eager_call_us, sr.compile_call_us = sr.candidate_us, sr.eager_us, sr.compile_us
    if not asked:
        return
    graph = graph or {}
    sr.graph_us = graph.get("graph_us")
    sr.eager_graph_us, sr.compile_graph_us = (
        base.get("eager_graph_us"),
        base.get("compile_graph_us"),
    )
    missing = []
    if graph.get("error"):
        missing.append(f"the candidate ({graph['error']})")
    elif sr.graph_us is None and sr.candidate_us is not None:
        missing.append("the candidate (not timed in a graph)")
    if sr.eager_graph_us is None:
        missing.append(f"eager ({base.get('graph_error') or 'not timed in a graph'})")
    if sr.compile_graph_us is None and sr.compile_us is not None:
        missing.append(f"torch.compile ({base.get('graph_error') or 'not timed in a graph'})")
    if sr.candidate_us is None:
        return
    if missing:
        sr.notes.append(
            "timed call by call for every method: no CUDA-graph time for " + "; ".join(missing)
        )
        return
    sr.timing = "graph"
    sr.candidate_us, sr.eager_us = sr.graph_us, sr.eager_graph_us
    sr.compile_us = sr.compile_graph_us
    sr.notes.append(
        f"timed as served, inside a CUDA graph (the score's figure): {sr.graph_us:.2f} µs per "
        f"call; call by call {sr.call_us:.2f} µs"
    )


def fill_perf(
    verdict: Verdict, task: Task, shapes: list[Shape], cand: dict, config: Any
) -> list[str]:
    """Speedups, roofline attainment, IOU, MFU and flags from the candidate's timings. Returns
    the shapes timed faster than the most generous roofline known (the judge fails those)."""
    impossible: list[str] = []
    base = run_baseline(
        task,
        shapes,
        baselines.BASELINE_SEED,
        work_root=getattr(config, "work_root", None),
        cache=getattr(config, "baseline_cache", ""),
    )
    if base.get("status") != "ok":
        verdict.perf_status = f"candidate timed, baselines failed: {base.get('message', '')}"
    peaks = Peaks.from_dict(base["peaks"]) if base.get("peaks") else None
    bandwidth, bw_source = peaks.bandwidth() if peaks else (None, "not measured")
    peak_flops, sheet_flops, peak_source = (
        peak_flops_for(task, peaks) if peaks else (None, None, "not measured")
    )
    # "impossible" is judged against the most generous ceiling we know (a hand-written kernel
    # may beat the calibration's cuBLAS or copy kernel, but not the datasheet)
    loose_bw = max(
        filter(None, [bandwidth, peaks.datasheet_bandwidth_bytes_per_s if peaks else None]),
        default=None,
    )
    loose_flops = max(filter(None, [peak_flops, sheet_flops]), default=None)
    floor = cand.get("launch_floor_us") or base.get("launch_floor_us")
    by_name = {s.shape: s for s in verdict.shapes}
    for shape in shapes:
        sr: ShapeResult = by_name[shape.name]
        c = cand.get(shape.name) or {}
        b = (base.get("shapes") or {}).get(shape.name, {})
        sr.candidate_us = c.get("candidate_us")
        sr.timing_method = c.get("method")
        mismatch = launch_mismatch(
            c.get("launches_per_call"), c.get("launches_while_timed"), c.get("calls_while_timed")
        )
        if mismatch:
            sr.notes.append(f"time not reported: {mismatch}")
            sr.candidate_us = None
            if "launch_mismatch" not in verdict.flags:
                verdict.flags.append("launch_mismatch")
        sr.triton_ratio = (c.get("profile") or {}).get("triton_ratio")
        if c.get("side_stream"):
            sr.notes.append("kernels ran on a side stream: timed with whole-device synchronisation")
            if "side_stream" not in verdict.flags:
                verdict.flags.append("side_stream")
        sr.eager_us, sr.compile_us = b.get("eager_us"), b.get("compile_us")
        sr.baseline = (base.get("origins") or {}).get(shape.name)
        if b.get("compile_error"):
            sr.notes.append(f"torch.compile failed: {b['compile_error']}")
        choose_timing(sr, c.get("graph") if sr.candidate_us else None, b, wants_graph(shape.phase))
        if sr.candidate_us:
            if sr.eager_us:
                sr.speedup_eager = sr.eager_us / sr.candidate_us
            if sr.compile_us:
                sr.speedup_compile = sr.compile_us / sr.candidate_us
        sr.flops, sr.bytes = task.flops(shape.dims), task.min_bytes(shape.dims)
        if sr.candidate_us and bandwidth and peak_flops:
            t_meas = sr.candidate_us * 1e-6
            for name, value in roofline_fields(
                sr.flops, sr.bytes, sr.candidate_us, peak_flops, bandwidth
            ).items():
                setattr(sr, name, value)
            if roofline.is_impossible(
                t_meas, roofline.roofline_time_s(sr.flops, sr.bytes, loose_flops, loose_bw)
            ):
                sr.notes.append(
                    f"measured {sr.candidate_us:.2f} µs is below the roofline {sr.roofline_us:.2f} µs: a timing bug or a cheat"
                )
                impossible.append(shape.name)
                if "impossible_time" not in verdict.flags:
                    verdict.flags.append("impossible_time")
            if floor and sr.timing == "call":
                sr.launch_bound = roofline.launch_bound(sr.candidate_us, floor)
                if sr.launch_bound:
                    sr.notes.append(
                        f"at the launch floor ({floor:.1f} µs per launch): read attainment with that in mind"
                    )
    ratios = [s.triton_ratio for s in verdict.shapes if s.triton_ratio is not None]
    verdict.triton_ratio = min(ratios) if ratios else None
    eager = [s.speedup_eager for s in verdict.shapes if s.speedup_eager]
    comp = [s.speedup_compile for s in verdict.shapes if s.speedup_compile]
    verdict.geomean_speedup_eager = roofline.geomean(eager) if eager else None
    verdict.geomean_speedup_compile = roofline.geomean(comp) if comp else None
    att = [s.attainment for s in verdict.shapes if s.attainment is not None]
    verdict.score = roofline.task_score(att) if att else None
    if base.get("status") == "ok":
        verdict.perf_status = f"measured; bandwidth {bw_source}; compute ceiling {peak_source}"
        reused = sorted(
            {(o.source, o.measured_at) for o in (base.get("origins") or {}).values() if o.reused}
        )
        if reused:
            when = ", ".join(f"{at} ({src})" for src, at in reused)
            verdict.notes.append(f"baseline times (eager, torch.compile) reused, measured {when}")
    if verdict.score is not None and math.isnan(verdict.score):
        verdict.score = None
    return impossible
