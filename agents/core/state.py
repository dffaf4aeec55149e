"""The agent's state: what the graph carries from node to node, and what the checkpoint saves.

The records that cross every boundary (nodes, checkpoint, run directory), each defined once here:

- `Candidate`: a kernel a node proposed and the judge has not seen yet (code, who made it, from
  which parent, the prompt and reply behind it, what it changes and the gain it predicts).
- `Attempt`: a candidate after the judge: its verdict in summary, its speed, whether it was
  accepted, whether dropout masked it. Attempts form a tree through `parent_id`.
- `Provenance`: where a candidate's code came from (one of `ORIGIN_KINDS`); each attempt keeps
  its own, and the run's summary.json holds the best kernel's.

`AgentState` is the graph's state. Keys with a reducer (`Annotated[..., reducer]`) merge the
updates of nodes that run in parallel (the generator fans out through `Send`); the others are
simply overwritten by the last node that returns them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypedDict, get_args

from pydantic import BaseModel, Field, computed_field

# An interleaved re-measurement of a candidate against the incumbent: one record, defined by the
# harness that measures it, stored as it is in each attempt (and the checkpoint).
from benchmarks import Remeasure as Measurement
from knowledge_base import is_template  # noqa: F401  (re-exported: origin kind "template")

OriginKind = Literal["task_solution", "template", "retrieved", "generated", "model", "optimized"]
ORIGIN_KINDS: tuple[str, ...] = get_args(OriginKind)


class Provenance(BaseModel):
    """Where a kernel's code came from. `kind` is one of a closed set:

    - task_solution: the task's own reference solution (knowledge_base/kernels/<task>.py); only
      in normal mode, never under hidden provenance (`benchmark`);
    - template: a generic template of the knowledge base (knowledge_base/kernels/tpl_*.py);
    - retrieved: another task's reference kernel, a neighbour the knowledge base returned;
    - generated: written by rules from the task's PyTorch reference (agents/offline/codegen/);
    - model: written by a model (`name` is its provider:model); `retrieved` lists the
      knowledge-base items its prompt showed, `parent_id` the failed attempt it repairs;
    - optimized: attempt `parent_id` changed by `name` (the offline tunable search, or the
      model provider:model) as `change` says; `base` is where that lineage began (never optimized).

    `label` is the short form (`template:tpl_online_softmax`, `retrieved:kernel:layernorm`,
    `generated:rowwise`, `model:openai:gpt-4o`, `optimized-from:3`), `sentence` the words."""

    kind: OriginKind
    name: str = ""  # the template's or knowledge-base id, the generator's structure, the model...
    path: str = ""  # the file the code was read from, where there is one
    how: str = ""  # how it was fitted to the task's entry point (e.g. "wrapped softmax()")
    parent_id: int | None = None
    change: str = ""
    retrieved: list[str] = Field(default_factory=list)
    base: Provenance | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def label(self) -> str:
        """The short form, written beside the fields (attempt.json, summary.json)."""
        if self.kind == "task_solution":
            return "task_solution"
        if self.kind == "optimized":
            return f"optimized-from:{self.parent_id}"
        return f"{self.kind}:{self.name}" if self.name else self.kind

    @property
    def root(self) -> Provenance:
        """Where the lineage began: `base` for an optimized kernel (itself when not recorded)."""
        return self.base if self.kind == "optimized" and self.base is not None else self

    def sentence(self) -> str:
        """Where the code came from, in words."""
        where = f" ({self.path})" if self.path else ""
        how = f", {self.how}" if self.how else ""
        if self.kind == "task_solution":
            return (
                f"the task's own reference solution{where}{how} (normal mode; --benchmark hides it)"
            )
        if self.kind == "template":
            return f"the knowledge base's template {self.name}{where}{how}"
        if self.kind == "retrieved":
            return f"a neighbouring task's kernel retrieved from the knowledge base, {self.name}{where}{how}"
        if self.kind == "generated":
            return f"written by rules from the task's PyTorch reference (agents/offline/codegen: {self.name})"
        if self.kind == "model":
            text = f"written by the model {self.name or '(unnamed)'}"
            if self.parent_id is not None:
                text += f", repairing attempt {self.parent_id}"
            if self.retrieved:
                text += f"; its prompt showed {', '.join(self.retrieved)}"
            return text
        text = f"attempt {self.parent_id} changed by {self.name or 'the optimizer'}"
        text += f" ({self.change})" if self.change else ""
        if self.base is not None:
            text += f"; that lineage began as {self.base.sentence()}"
        return text


class Candidate(BaseModel):
    """A proposed kernel awaiting evaluation."""

    key: str  # stable id of this proposal: the evaluator uses it to recognise work already on disk
    slot: int = 0  # which of the parallel generator calls made it
    node: str  # "generator" or "optimizer"
    mode: str  # "fresh", "repair" or "optimize"
    iteration: int  # the evaluator round it belongs to
    parent_id: int | None = None
    code: str
    prompt: str = ""  # what the model (or the offline policy) was asked, as Markdown
    reply: str = ""  # what it answered
    change: str = ""  # what the candidate changes (optimizer)
    predicted_gain: float | None = None  # the optimizer's predicted speed-up, e.g. 0.10 = 10 %
    origin: str = ""  # the lineage's key: the reference kernel's id, or the model's provider:model
    provenance: Provenance | None = None  # where the code came from, as a record
    tunables: dict[str, Any] = Field(default_factory=dict)  # the search's config tried


class VerdictSummary(BaseModel):
    """The parts of a `benchmarks.verdict.Verdict` the agent routes on (the full one is on disk)."""

    passed: bool
    stage_reached: str | None = None
    error_class: str = "none"
    message: str = ""
    perf_status: str = "not measured"
    geomean_speedup_eager: float | None = None
    geomean_speedup_compile: float | None = None
    score: float | None = None  # median roofline attainment over shapes
    candidate_us: dict[str, float] = Field(default_factory=dict)  # per shape, where timed
    skipped: list[str] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)


class Attempt(BaseModel):
    """One evaluated candidate: a node of the attempt tree."""

    id: int
    parent_id: int | None = None
    node: str
    mode: str
    iteration: int
    slot: int = 0  # the parallel generator call that made it (0 for the optimizer)
    key: str
    code_path: str  # relative to the run directory
    code_sha256: str
    prompt_path: str | None = None
    reply_path: str | None = None
    profile_path: str | None = None
    verdict: VerdictSummary
    change: str = ""
    predicted_gain: float | None = None
    measurement: Measurement | None = None
    accepted: bool | None = None  # became the incumbent (None: the question did not arise)
    masked: bool = False  # hidden from prompts by dropout; never deleted
    origin: str = ""
    provenance: Provenance | None = None  # None: recorded by a version before provenance
    tunables: dict[str, Any] = Field(default_factory=dict)
    # the model-written test's outcome (agent.llm_tests): feedback only, never the verdict
    model_test: dict[str, Any] | None = None

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    @property
    def geomean_us(self) -> float | None:
        """Geometric mean of the judge's per-shape times, or None when not timed."""
        times = [t for t in self.verdict.candidate_us.values() if t and t > 0]
        if not times:
            return None
        product = 1.0
        for t in times:
            product *= t
        return product ** (1.0 / len(times))


# --------------------------------------------------------------------------------------------
# Reducers: how parallel or repeated updates of one key merge
# --------------------------------------------------------------------------------------------


def upsert_attempts(left: list[Attempt] | None, right: list[Attempt] | None) -> list[Attempt]:
    """Attempts by id: an update replaces the attempt with the same id (e.g. masked by dropout),
    a new id is appended. The result is ordered by id."""
    merged = {a.id: a for a in left or []}
    for attempt in right or []:
        merged[attempt.id] = attempt
    return [merged[i] for i in sorted(merged)]


def collect_pending(left: list[Candidate] | None, right: list[Candidate] | None) -> list[Candidate]:
    """Candidates from parallel generator calls accumulate; `None` (the evaluator) clears them."""
    if right is None:
        return []
    return sorted([*(left or []), *right], key=lambda c: c.slot)


def keep_first(left: str | None, right: str | None) -> str | None:
    """A stop reason, once given, stays (parallel generators may both hit the budget)."""
    return left or right


def add_ints(left: int | None, right: int | None) -> int:
    return (left or 0) + (right or 0)


def union_ints(left: list[int] | None, right: list[int] | None) -> list[int]:
    return sorted(set(left or []) | set(right or []))


def latest_spend(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Budget snapshots: keep the one that has counted more (parallel nodes report concurrently)."""
    if not right:
        return left or {}
    if not left:
        return right

    def progress(snapshot: dict[str, Any]) -> tuple[int, float, float]:
        used = snapshot.get("used", {})
        return (used.get("calls", 0), used.get("gpu_s", 0.0), used.get("wall_s", 0.0))

    return right if progress(right) >= progress(left) else left


class AgentState(TypedDict, total=False):
    """Everything the graph carries. Counters are overwritten; reducers are named above."""

    run_id: str
    task_id: str
    iteration: int  # evaluator rounds completed
    attempts: Annotated[list[Attempt], upsert_attempts]
    pending: Annotated[list[Candidate], collect_pending]
    last_batch: list[int]  # ids of the attempts of the latest evaluator round
    incumbent_id: int | None  # the best correct attempt so far
    stale: int  # evaluator rounds since the incumbent last improved
    repair_streak: int  # failed rounds in a row since the current approach began (a round of only
    # fresh kernels or optimizer proposals counts 1)
    retrieved: list[dict[str, Any]]  # knowledge-base hits, as shown in prompts
    knowledge_note: str  # what retrieval found, or why there is no knowledge
    references: list[dict[str, Any]]  # kernels the offline policy may start from
    # the configuration sweeps (agents/offline/sweep.py), by lineage (the offline policy: the
    # incumbent's origin; the model policy: origin#design, one per design of a kernel): plain
    # JSON, each its ranking and the finalists proposed so far (agents/offline/search.py
    # sweep_record)
    sweeps: dict[str, dict[str, Any]]
    reflection: dict[str, Any] | None  # the reflector's diagnosis of the latest failure
    reflections: list[dict[str, Any]]  # every diagnosis of the latest round (per-slot lineage)
    model_test: dict[str, Any] | None  # the model-written test (agent.llm_tests): code and path
    profile: dict[str, Any] | None  # roofline + Nsight Compute summary of the incumbent
    device_info: dict[str, Any]  # device name and peaks, for prompts
    dropouts: list[dict[str, Any]]
    nocode_errors: Annotated[int, add_ints]  # replies without usable code, fed back to the model
    replay_served: Annotated[list[int], union_ints]  # replay entries used (for --resume)
    spend: Annotated[dict[str, Any], latest_spend]  # BudgetTracker.snapshot()
    stop_reason: Annotated[str | None, keep_first]  # why the run must stop, set by a node
    finished: bool


# Types the checkpoint may rebuild from its store (see graph.checkpointer); nothing else.
CHECKPOINT_TYPES: tuple[type[BaseModel], ...] = (
    Candidate,
    VerdictSummary,
    Measurement,
    Provenance,
    Attempt,
)


def attempt_by_id(state: AgentState, attempt_id: int | None) -> Attempt | None:
    if attempt_id is None:
        return None
    for attempt in state.get("attempts", []):
        if attempt.id == attempt_id:
            return attempt
    return None


def incumbent(state: AgentState) -> Attempt | None:
    return attempt_by_id(state, state.get("incumbent_id"))


def latest_batch(state: AgentState) -> list[Attempt]:
    ids = set(state.get("last_batch", []))
    return [a for a in state.get("attempts", []) if a.id in ids]


def visible_history(state: AgentState, window: int) -> list[Attempt]:
    """The attempts a prompt may show: unmasked, the latest `window` of them, and always the
    incumbent (even when it is older than the window)."""
    unmasked = [a for a in state.get("attempts", []) if not a.masked]
    shown = unmasked[-window:] if window > 0 else []
    best = incumbent(state)
    if best is not None and all(a.id != best.id for a in shown):
        shown = [best, *shown]
    return shown


def best_correct(state: AgentState, k: int) -> list[Attempt]:
    """The `k` best correct attempts: the incumbent first, then the fastest measured, then the
    newest. Attempts masked by dropout are left out (the incumbent never is masked)."""
    best = incumbent(state)
    others = [
        a
        for a in state.get("attempts", [])
        if a.passed and not a.masked and (best is None or a.id != best.id)
    ]
    others.sort(key=lambda a: (a.geomean_us is None, a.geomean_us or 0.0, -a.id))
    ranked = ([best] if best is not None else []) + others
    return ranked[: max(k, 0)]


def optimized_from(parent: Attempt, by: str, change: str) -> Provenance:
    """The provenance of a change to `parent` made by `by` (the search or a model)."""
    base = parent.provenance.root if parent.provenance is not None else None
    return Provenance(kind="optimized", name=by, parent_id=parent.id, change=change, base=base)
