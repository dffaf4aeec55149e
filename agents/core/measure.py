"""Measure-revise acceptance: does a correct candidate beat the incumbent beyond the noise? And
the sweep that ranks many configurations of the incumbent at once (`sweep_configs`).

On a GPU this is `benchmarks.harness.remeasure.interleaved` (incumbent, candidate, candidate, incumbent
per round, in one process), run by the run's executor where it times candidates, so it never
overlaps a judge's timing on the same GPU. Without a GPU nothing is measured and the answer says so. The
`scripted_measure` and `scripted_sweep` test seams (agents/core/seams.py) replace the GPU in tests;
their results are labelled `scripted` wherever they appear.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from agents.core.state import Measurement
from benchmarks import Sweep

if TYPE_CHECKING:  # the context holds the policies, and the offline policy sweeps through here
    from agents.core.context import RunContext


def measure(
    ctx: RunContext, incumbent_id: int, incumbent_code: str, candidate_code: str
) -> Measurement:
    """The re-measurement of `candidate_code` against the incumbent, labelled with the
    incumbent's attempt id (and `scripted` when the test seam produced it)."""
    scripted = ctx.seams.scripted_measure
    if scripted is not None:
        result = scripted(ctx.task, incumbent_code, candidate_code)
        return _record(result, incumbent_id, scripted=True)
    if ctx.device != "cuda":
        return Measurement(
            measured=False,
            reason="not measured (no GPU): speed cannot be compared here",
            incumbent_id=incumbent_id,
        )
    from benchmarks import EvalRequest, JudgeConfig, RemeasureRequest

    executor = ctx.judge_executor()
    candidate = EvalRequest.for_task(
        ctx.task,
        candidate_code,
        JudgeConfig(device="cuda"),  # the remeasure draws fresh inputs for both kernels
        label="candidate",
        ship_task=executor.kind == "ray",
    )
    request = RemeasureRequest(candidate, incumbent_code, ctx.config.remeasure_rounds)
    started = time.monotonic()
    result = executor.submit(request).result()
    ctx.tracker.add_gpu_s(time.monotonic() - started)
    return _record(result, incumbent_id, scripted=False)


def _record(result: object, incumbent_id: int, *, scripted: bool) -> Measurement:
    """`result` (a copy) labelled with who measured what: the incumbent's id, scripted or not.
    A test seam may return any object with the record's attributes."""
    if not isinstance(result, Measurement):
        result = Measurement.model_validate(result, from_attributes=True)
    return result.model_copy(update={"incumbent_id": incumbent_id, "scripted": scripted})


def sweep_request(
    ctx: RunContext, incumbent_id: int, sources: list[str], configs: list[dict[str, Any]]
) -> Any:
    """The SweepRequest of `sources` (the incumbent with `configs[i]` set) on the run's executor."""
    from benchmarks import EvalRequest, JudgeConfig, SweepRequest

    executor = ctx.judge_executor()
    base = EvalRequest.for_task(
        ctx.task,
        sources[0],
        # fresh inputs per sweep; the offline policy's kernels are the project's own
        JudgeConfig(device="cuda", trusted=ctx.policy.trusted_code),
        label=f"attempt {incumbent_id}",
        ship_task=executor.kind == "ray",
    )
    return SweepRequest(base, sources, configs, timeout_s=ctx.config.judge_timeout_s)


def sweep_configs(
    ctx: RunContext, incumbent_id: int, sources: list[str], configs: list[dict[str, Any]]
) -> Sweep:
    """The ranking of `sources` (the incumbent with `configs[i]` set), timed in one GPU worker
    on the run's executor (`benchmarks.sweep`), or by the `scripted_sweep` test seam. Nothing
    in it is a verdict: the caller judges its finalists like any candidate."""
    scripted = ctx.seams.scripted_sweep
    if scripted is not None:
        result = scripted(ctx.task, sources, configs)
        if not isinstance(result, Sweep):
            result = Sweep.model_validate(result, from_attributes=True)
        return result.model_copy(update={"scripted": True})
    if ctx.device != "cuda":
        return Sweep(measured=False, reason="not measured (no GPU): speed cannot be ranked here")
    from benchmarks import ExecutorError

    request = sweep_request(ctx, incumbent_id, sources, configs)
    started = time.monotonic()
    try:
        result = ctx.judge_executor().submit(request).result()
    except ExecutorError as exc:
        result = Sweep(measured=False, reason=f"sweep failed: {exc}")
    ctx.tracker.add_gpu_s(time.monotonic() - started)
    return result
