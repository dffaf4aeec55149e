"""The decisions a run delegates, behind one interface: what kernels to start from, a new or
repaired kernel, a diagnosis of a failure, an optimisation of the incumbent, the model's own test.

Two policies implement it: `agents.core.model_policy.ModelPolicy` (prompts rendered from
prompts/*.j2 and sent through agents/core/ask.py) and `agents.offline.policy.OfflinePolicy`
(reference kernels, a measured tunable search, rule-based diagnosis). `RunContext.policy` holds
the run's; the nodes call it and never ask which one it is. What differs in routing (whether a
failure is repaired, whether tests are written, when nothing is left to try) is asked of the
policy too, so that knowledge lives in the policy alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agents.core.state import AgentState, Attempt, Candidate, Provenance

if TYPE_CHECKING:
    from agents.core.context import RunContext
    from agents.core.nodes.generator import GeneratorJob


@dataclass
class Proposal:
    """A policy's answer when a node asks for code (a kernel, or the model's test).

    `code` None means nothing this time; `note` says why. `logged` holds the fields the node's
    event carries about this proposal, `said` the line printed for people. `updates` is the
    policy's own bookkeeping for the state (model spend, replay position, replies without code).
    `stop` is set when the policy has nothing more to try and the run should end for that reason.
    Every proposal with code says where the code came from (`provenance`).
    """

    code: str | None
    prompt: str = ""  # what was asked, as Markdown (prompt.md)
    reply: str = ""  # what was answered (reply.md)
    parent_id: int | None = None  # the attempt this code repairs (generator)
    origin: str = ""  # the lineage's key: a reference kernel's id, a model's provider:model
    provenance: Provenance | None = None  # where the code came from (agents/core/state.py)
    tunables: dict[str, Any] = field(default_factory=dict)  # the configuration tried (search)
    change: str = ""  # what the code changes (optimizer)
    predicted_gain: float | None = None  # the stated speed-up, 0.10 = 10 % (optimizer)
    note: str = ""
    logged: dict[str, Any] = field(default_factory=dict)
    said: str = ""
    updates: dict[str, Any] = field(default_factory=dict)
    stop: str | None = None

    def candidate(
        self,
        *,
        key: str,
        node: str,
        mode: str,
        iteration: int,
        slot: int,
        parent_id: int | None,
        origin: str,
    ) -> Candidate:
        """The proposal as a candidate for the evaluator."""
        assert self.code is not None, "a proposal without code is no candidate"
        return Candidate(
            key=key,
            slot=slot,
            node=node,
            mode=mode,
            iteration=iteration,
            parent_id=parent_id,
            code=self.code,
            prompt=self.prompt,
            reply=self.reply,
            change=self.change,
            predicted_gain=self.predicted_gain,
            origin=origin,
            provenance=self.provenance,
            tunables=dict(self.tunables),
        )


class Policy(Protocol):
    """What the nodes ask. Every method may raise `BudgetExceeded` (agents/core/llm/base.py)
    when it would call a model whose budget is spent; the node turns that into a stop
    (agents/core/nodes/budget.py)."""

    @property
    def repairs(self) -> bool:
        """Whether a failed kernel is repaired (False: every new kernel is a fresh start)."""
        ...

    @property
    def writes_tests(self) -> bool:
        """Whether this policy can write its own test script (agent.llm_tests)."""
        ...

    @property
    def trusted_code(self) -> bool:
        """Whether every kernel it proposes is the project's own (knowledge base, code generator),
        so the judge may run it without OS isolation where none exists; model-written code never is."""
        ...

    @property
    def uses_counters(self) -> bool:
        """Whether its optimisation reads hardware counters (the profile node's Nsight Compute
        summary); when it does not, the profile node skips ncu and says so."""
        ...

    def references(
        self, ctx: RunContext, kernel_hits: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """The kernels this policy may start from, best first, from the knowledge base's kernel
        hits ({"id", "path", "source", "how", "tunables"} each)."""
        ...

    def nothing_left(self, state: AgentState) -> str | None:
        """Why this policy cannot propose another kernel while there is no correct one, or None."""
        ...

    def generate(self, ctx: RunContext, job: GeneratorJob) -> Proposal:
        """A new kernel for one generator slot: fresh, or a repair of `job["parent"]`."""
        ...

    def diagnose(self, ctx: RunContext, state: AgentState, target: Attempt) -> dict[str, Any]:
        """The diagnosis of one failed attempt ({"attempt_id", "by", "error_class",
        "diagnosis", "advice"}); "by" names who diagnosed it ("rules" or "llm")."""
        ...

    def optimize(self, ctx: RunContext, state: AgentState, best: Attempt) -> Proposal:
        """One change to the incumbent `best`, with what it changes and the gain it predicts."""
        ...

    def write_test(self, ctx: RunContext, state: AgentState) -> Proposal:
        """A test script for the task (agent.llm_tests): feedback for repairs, never the verdict."""
        ...

    def ahead(self, ctx: RunContext, state: AgentState, candidate: Candidate) -> None:
        """`candidate` is being judged and the run has no incumbent yet: start what its
        optimisation would need first if it passes (both policies: the sweep's compiles,
        agents/offline/sweep.py `prepare_sweep`). Decides nothing."""
        ...
