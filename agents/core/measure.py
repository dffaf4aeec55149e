"""Measure-revise acceptance: does a correct candidate beat the incumbent beyond the noise?

On a GPU this is `benchmarks.harness.remeasure.interleaved` (incumbent, candidate, candidate, incumbent
per round, in one process), run by the run's executor where it times candidates, so it never
overlaps a judge's timing on the same GPU. Without a GPU nothing is measured and the answer says so. The
`scripted_measure` test seam (agents/core/seams.py) replaces the GPU in tests; its results are
labelled `scripted` wherever they appear.
"""

from __future__ import annotations

import time

from agents.core.context import RunContext
from agents.core.state import Measurement


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
