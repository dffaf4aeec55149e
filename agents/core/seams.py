"""The agent's TEST SEAMS: the three places where a test may replace a part of the machine.

    from agents.core.seams import Seams
    api.run("softmax_fp32", device="cpu", seams=Seams(scripted_measure=always_gain))
    api.run("softmax_fp32", device="cpu",
            seams=Seams(scripted_measure=always_gain, scripted_sweep=ranked_by_block))

A `Seams` is handed to `agents.api.run` / `start` / `resume` and to the bench
(`agents.bench.run_bench`), which pass it on unchanged to the run's `RunContext`; nodes read it
there. It is never built from settings, the environment or the CLI: only Python callers (tests,
the worked example) can set one, so no user run is ever scripted by accident.

Results a seam produces are labelled, never passed off as measured: with `scripted_measure` set,
every re-measurement is recorded with `scripted: true` (attempt records, the `start` event, the
summary's note and `measurements_scripted`), the manifest's config says `scripted_measure: true`,
and `benchmarks.results.rows` reads that to mark the run's result rows scripted. With
`scripted_sweep` set, every sweep is recorded with `scripted: true` (its `sweep` event and the
state's record), the `start` event and the manifest's config say `scripted_sweep: true`, and the
manifest's `scripted_measure` label is true as well (`scripted`), so the rows are marked too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Seams:
    """The test seams of one run (both None in every real run).

    A bench with several workers sends a copy to each spawned process, so a seam must then be
    picklable: a module-level function or an instance of a module-level class."""

    # replaces benchmarks.harness.remeasure.interleaved: (task, incumbent_source,
    # candidate_source) -> a Remeasure-like result, so the optimisation path runs without a GPU
    scripted_measure: Callable[[Any, str, str], Any] | None = None
    # replaces the knowledge-base opener (knowledge_base.retrieve.default_kb): () -> a KB
    open_kb: Callable[[], Any] | None = None
    # replaces benchmarks.harness.sweep.sweep: (task, sources, configs) -> a Sweep-like result
    # (entries ranked, each with its config and score), so the offline policy's sweep and its
    # finalists run without a GPU
    scripted_sweep: Callable[[Any, list[str], list[dict[str, Any]]], Any] | None = None

    @property
    def scripted(self) -> bool:
        """Whether any measurement is scripted, a re-measurement or a sweep (and so the run's
        results are labelled `scripted` wherever they go)."""
        return self.scripted_measure is not None or self.scripted_sweep is not None
