"""How a run's candidates are judged, and what it asks of its executor before the first one.

`judge_config` is the one `JudgeConfig` a run judges with (the evaluator's requests and the
baselines it sends ahead both use it, so they share the baseline cache's keys);
`baselines_ahead` sends the task's baselines to the executor when the run starts on a GPU.
Neither imports the run's context: both take it as it is (a `RunContext`).
"""

from __future__ import annotations

from typing import Any


def judge_config(ctx: Any) -> Any:
    """How this run's candidates are judged (a `JudgeConfig`)."""
    from benchmarks import JudgeConfig

    cfg = ctx.config
    return JudgeConfig(
        device=ctx.device,
        trials=cfg.judge_trials,  # inputs: a fresh seed per evaluation (JudgeConfig.seed)
        timeout_s=cfg.judge_timeout_s,
        perf=True,
        # model-written code is refused where no OS isolation exists
        trusted=ctx.policy.trusted_code,
        baseline_cache=cfg.baseline_cache,
    )


def baselines_ahead(ctx: Any, executor: Any) -> Any:
    """On a GPU, a request to `executor` to measure the task's baselines now, while the run
    generates and compiles its first candidate (whose judge then finds them in the baseline
    cache); its future, or None on the CPU (nothing is timed there), on the inline executor
    (which would measure them right here, overlapping nothing) or where a test seam stands in
    for the judge."""
    from benchmarks import BaselineRequest, EvalRequest

    if ctx.device != "cuda" or ctx.seams.scripted_measure is not None or executor.kind == "inline":
        return None
    base = EvalRequest.for_task(
        ctx.task, "", judge_config(ctx), label="baselines", ship_task=executor.kind == "ray"
    )
    return executor.submit(BaselineRequest(base))
