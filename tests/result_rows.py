"""Result rows built by hand for the analysis, store and report tests (no judge, no GPU)."""

from __future__ import annotations

from typing import Any

from benchmarks.results.rows import CPU_DEVICE_NAME, ResultRow

H200 = "NVIDIA H200"


def row(
    task: str = "t1",
    method: str = "m1",
    *,
    passed: bool = True,
    speedup: float | None = None,
    compile_speedup: float | None = None,
    score: float | None = None,
    device: str = H200,
    category: str = "c1",
    seed: int = 0,
    attempt: int = 0,
    iteration: int | None = None,
    parent: int | None = None,
    stage: str | None = None,
    scripted: bool = False,
    run_id: str = "",
    **extra: Any,
) -> ResultRow:
    """A row; `stage` defaults to no_fallback for a pass and correct_standard's predecessor for a fail."""
    if stage is None:
        stage = "no_fallback" if passed else "call"
    timed = device != CPU_DEVICE_NAME and (speedup is not None or compile_speedup is not None)
    return ResultRow(
        task_id=task,
        method=method,
        passed=passed,
        stage_reached=stage,
        error_class="none" if passed else extra.pop("error_class", "numerical_mismatch"),
        geomean_speedup_eager=speedup,
        geomean_speedup_compile=compile_speedup,
        score=score,
        device=device,
        category=category,
        seed=seed,
        attempt=attempt,
        iteration=iteration,
        parent_attempt=parent,
        perf_measured=timed,
        scripted=scripted,
        run_id=run_id or f"{task}-{method}-{seed}",
        **extra,
    )


def cpu_row(task: str = "t1", method: str = "m1", **kw: Any) -> ResultRow:
    return row(task, method, device=CPU_DEVICE_NAME, **kw)
