"""The configuration sweep as one step of the optimizer, shared by both policies.

Given the incumbent and the tunable space its source declares (agents/offline/tunables.py), the
first optimizer call of a lineage enumerates its configurations (`search.enumerate_configs`), has
them ranked in one GPU worker (`agents.core.measure.sweep_configs`, or the scripted_sweep test
seam), keeps the ranking in the state (`search.sweep_record`, under `sweeps[lineage]`) and logs
one `sweep` event; each later call proposes the ranking's next gated finalist
(`search.next_finalist`), which the evaluator judges and re-measures like any candidate.

What a policy does when the step offers nothing is its own business: the offline policy stops (a
measured sweep spent) or falls back to its coordinate search (no sweep measured); the model policy
asks the model. `sweep_step` only says which of these it is (`SweepStep`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents.core.policy import Proposal
from agents.core.state import AgentState, Attempt, optimized_from
from agents.offline.search import Enumeration, enumerate_configs, next_finalist, sweep_record
from agents.offline.tunables import set_tunables

if TYPE_CHECKING:
    from agents.core.context import RunContext

TOP_SHOWN = 5  # the fastest configurations the `sweep` event and the model's prompt show


def can_sweep(ctx: RunContext) -> bool:
    """Whether a sweep can rank anything here: a GPU, or the scripted_sweep test seam."""
    return ctx.device == "cuda" or ctx.seams.scripted_sweep is not None


@dataclass(frozen=True)
class Sweeper:
    """Who runs the sweep, in the words its records and messages use."""

    by: str  # the optimizer named in a finalist's provenance ("the offline tunable search")
    who: str  # the policy, as progress lines and prompt.md headings name it ("offline policy")
    instead: str  # what happens when the sweep cannot measure ("coordinate search instead")


@dataclass
class SweepStep:
    """What the sweep offers the incumbent this round.

    `proposal`: the next finalist, or None. Without one, `record` says why: None (no sweep for
    this lineage: no space, agent.sweep off, nothing to rank with), unmeasured (`record["reason"]`),
    or measured and spent (`why`). `sweeps` is the state's `sweeps` as this step leaves it."""

    record: dict[str, Any] | None
    proposal: Proposal | None = None
    why: str = ""
    sweeps: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def spent(self) -> bool:
        """A measured sweep with no finalist left to offer."""
        return self.proposal is None and self.record is not None and self.record["measured"]


def sweep_step(
    ctx: RunContext,
    state: AgentState,
    best: Attempt,
    *,
    lineage: str,
    code: str,
    space: dict[str, list[Any]],
    current: dict[str, Any],
    tried: list[dict[str, Any]],
    sweeper: Sweeper,
) -> SweepStep:
    """Run the sweep of `lineage` if it has none yet and can have one (a space, agent.sweep,
    `can_sweep`), then offer its next finalist: `best` (source `code`, configuration `current`)
    with one ranked configuration set, none of `tried` and none proposed before."""
    before = state.get("sweeps") or {}
    sweeps = dict(before)
    if space and ctx.config.sweep and lineage not in sweeps and can_sweep(ctx):
        sweeps[lineage] = run_sweep(ctx, best, code, space, current, tried, sweeper)
    record = sweeps.get(lineage)
    if record is None or not record["measured"]:
        return SweepStep(record, sweeps=sweeps)
    config, rank, why = next_finalist(record, tried)
    if config is None:
        return SweepStep(record, why=why, sweeps=sweeps)
    record = {**record, "proposed": [*record["proposed"], config]}
    sweeps = {**sweeps, lineage: record}
    proposal = _finalist(ctx, best, code, current, record, config, rank, sweeper)
    proposal.updates = {**proposal.updates, "sweeps": sweeps}
    return SweepStep(record, proposal, sweeps=sweeps)


def planned(
    ctx: RunContext,
    code: str,
    space: dict[str, list[Any]],
    current: dict[str, Any],
    tried: list[dict[str, Any]],
) -> tuple[Enumeration, list[str], list[dict[str, Any]]]:
    """The sweep of `code` (configuration `current`): its enumeration, and the sources and
    configurations it times. The incumbent is timed first and again last: how far apart its two
    timings are is the sweep's own noise, which a finalist's gain must exceed
    (agent.sweep_min_gain)."""
    found = enumerate_configs(
        current,
        space,
        tried,
        max_configs=ctx.config.sweep_max_configs,
        dtype=ctx.task.dtype,
        seed=ctx.task.id,
    )
    entry = ctx.task.entry_point
    sources = [
        set_tunables(code, entry, {k: v for k, v in c.items() if current.get(k) != v})
        for c in found.configs
    ]
    return found, [*sources, sources[0]], [*found.configs, found.configs[0]]


def can_prepare(ctx: RunContext) -> bool:
    """Whether a sweep told of ahead can be compiled ahead: a GPU (not the scripted_sweep seam)."""
    return ctx.device == "cuda" and ctx.seams.scripted_sweep is None


def prepare_sweep(
    ctx: RunContext,
    state: AgentState,
    *,
    lineage: str,
    code: str,
    space: dict[str, list[Any]],
    current: dict[str, Any],
    tried: list[dict[str, Any]],
) -> bool:
    """Tell the run's executor of the sweep `sweep_step` will run if `code` becomes the
    incumbent of `lineage` (called while it is judged: its configurations then compile on CPU
    workers beside that judge, not after it). Whether it was told; nothing is measured here."""
    if not (space and ctx.config.sweep and can_prepare(ctx)):
        return False
    if lineage in (state.get("sweeps") or {}):
        return False
    from agents.core.measure import sweep_request

    _, sources, timed = planned(ctx, code, space, current, tried)
    ctx.judge_executor().prepare(sweep_request(ctx, 0, sources, timed))
    return True


def run_sweep(
    ctx: RunContext,
    best: Attempt,
    code: str,
    space: dict[str, list[Any]],
    current: dict[str, Any],
    tried: list[dict[str, Any]],
    sweeper: Sweeper,
) -> dict[str, Any]:
    """One sweep over the incumbent's configurations: enumerated and pruned here, ranked in one
    GPU worker (or by the scripted_sweep seam); its record for the state, and its `sweep`
    event."""
    from agents.core.measure import sweep_configs

    cfg = ctx.config
    found, sources, timed = planned(ctx, code, space, current, tried)
    ctx.progress.note(
        f"{sweeper.who}: sweeping {len(found.configs)} configuration(s) of attempt {best.id} "
        f"({found.how}; {found.product} in the space, {len(found.pruned)} pruned, "
        f"{found.already_tried} already tried)"
    )
    started = time.monotonic()
    swept = sweep_configs(ctx, best.id, sources, timed)
    wall = time.monotonic() - started  # the compile stage ahead of the timing included
    record = sweep_record(
        swept,
        found,
        incumbent_id=best.id,
        finalists=cfg.sweep_finalists,
        phases={s.name: s.phase for s in ctx.task.shapes},
        min_gain=cfg.sweep_min_gain,
    )
    # configurations per minute of the whole sweep (compiled ahead, then timed): the rate a
    # run sees; `seconds` is the timing job's own share
    per_minute = round(60.0 * len(found.configs) / wall, 1) if wall > 0 else None
    ctx.event(
        "sweep",
        incumbent=best.id,
        measured=record["measured"],
        reason=record["reason"],
        scripted=record["scripted"],
        configs=record["configs"],
        failed=record["failed"],
        pruned=record["pruned"],
        pruned_examples=[{"config": c, "why": why} for c, why in found.pruned[:3]],
        already_tried=record["already_tried"],
        product=record["product"],
        how=record["how"],
        seconds=record["seconds"],
        per_config_s=record.get("per_config_s"),
        recompiled_in_worker=record.get("recompiled"),
        per_config_phases_s=record.get("phases_s"),
        wall_seconds=round(wall, 3),
        configs_per_minute=per_minute,
        compile_note=swept.compile_note,
        incumbent_us=record["baseline_us"],
        noise=record["noise"],
        gate=record["gate"],
        top=record["ranked"][:TOP_SHOWN],
        failures=[{"config": e.config, "error": e.error} for e in swept.failed[:5]],
    )
    if record["measured"]:
        best_entry = record["ranked"][0]
        said = (
            f"sweep: {record['configs']} configuration(s) in {record['seconds']:.1f} s, "
            f"{record['failed']} failed; fastest {best_entry['score_us']:.2f} us "
            f"({best_entry['config']})"
        )
        if record["baseline_us"] is not None:
            said += f", the incumbent's own {record['baseline_us']:.2f} us"
        ctx.progress.note(said + (" [scripted]" if record["scripted"] else ""))
    else:
        ctx.progress.note(f"sweep: {record['reason']}; {sweeper.instead}", style="yellow")
    return record


def _finalist(
    ctx: RunContext,
    best: Attempt,
    code: str,
    current: dict[str, Any],
    record: dict[str, Any],
    config: dict[str, Any],
    rank: int,
    sweeper: Sweeper,
) -> Proposal:
    """The finalist `config` (ranked `rank` in `record`, which already lists it as proposed) as
    a change to the incumbent."""
    changed = {k: v for k, v in config.items() if current.get(k) != v}
    change = ", ".join(f"{k}: {current[k]} -> {v}" for k, v in changed.items())
    score = next(e["score_us"] for e in record["ranked"] if e["config"] == config)
    baseline = record["baseline_us"]
    gain = baseline / score - 1.0 if baseline else None
    n = len(record["proposed"])
    where = (
        f"sweep finalist {n} of at most {record['finalists']}, rank {rank} of {record['configs']}"
    )
    timed = f"{score:.2f} us in the sweep" + (
        f" against the incumbent's own {baseline:.2f} us" if baseline else ""
    )
    prompt = (
        f"# {sweeper.who}: sweep finalist\n\nIncumbent attempt {best.id} with {current}.\n"
        f"The sweep ranked {record['configs']} configurations ({record['how']}); "
        f"this is {where}: {timed}.\n\nTry {change}.\n"
    )
    return Proposal(
        code=set_tunables(code, ctx.task.entry_point, changed),
        prompt=prompt,
        change=change,
        predicted_gain=gain,
        provenance=optimized_from(best, sweeper.by, change),
        tunables=config,
        logged={
            "change": change,
            "predicted_gain": gain,
            "note": f"{where}: {timed} (a ranking in one process; the judge and the "
            "re-measurement decide)",
            "scripted": record["scripted"],
        },
        said=f"optimizer (sweep, {where}): {change}",
    )
