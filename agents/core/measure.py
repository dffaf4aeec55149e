"""Measure-revise acceptance: does a correct candidate beat the incumbent beyond the noise?

On a GPU this is `benchmarks.harness.remeasure.interleaved` (incumbent, candidate, candidate, incumbent
per round, in one process). Without a GPU nothing is measured and the answer says so. The
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
    from benchmarks.harness.remeasure import interleaved

    started = time.monotonic()
    result = interleaved(
        ctx.task,
        incumbent_code,
        candidate_code,
        device="cuda",
        rounds=ctx.config.remeasure_rounds,
        seed=ctx.config.seed,
    )
    ctx.tracker.add_gpu_s(time.monotonic() - started)
    return _record(result, incumbent_id, scripted=False)


def _record(result: object, incumbent_id: int, *, scripted: bool) -> Measurement:
    return Measurement(
        measured=bool(getattr(result, "measured", False)),
        reason=str(getattr(result, "reason", "")),
        incumbent_id=incumbent_id,
        incumbent_us=list(getattr(result, "incumbent_us", [])),
        candidate_us=list(getattr(result, "candidate_us", [])),
        gain=float(getattr(result, "gain", 0.0)),
        noise=float(getattr(result, "noise", 0.0)),
        significant=bool(getattr(result, "significant", False)),
        scripted=scripted,
    )
