"""What every node may use besides the state: the task, the config, the model, the policy that
decides with it (or without it), the budget, the run directory, progress output. One
`RunContext` per process; nodes get it bound by graph.py.

The state is what the checkpoint saves; the context is rebuilt on `--resume` (its budget
tracker and replay position restored from the state).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agents.core.clip import clip
from agents.core.config import AgentConfig
from agents.core.llm.base import Completion, FailedAttempt, Message, Provider
from agents.core.llm.budget import BudgetTracker
from agents.core.llm.replay import ReplayProvider
from agents.core.model_policy import ModelPolicy
from agents.core.policy import Policy
from agents.core.progress import Progress
from agents.core.redact import scrub
from agents.core.rundir import RunDir
from agents.core.seams import Seams
from agents.offline.policy import OfflinePolicy


def default_open_kb(request_timeout_s: float) -> Any:
    """The project's knowledge base (built on first search if empty); each request to a chroma
    server has the deadline `request_timeout_s` (kb.timeout)."""
    from knowledge_base import default_kb

    return default_kb(request_timeout_s=request_timeout_s)


@dataclass
class RunContext:
    config: AgentConfig
    task: Any  # benchmarks.task.Task
    device: str  # resolved: "cpu" or "cuda"
    run: RunDir
    provider: Provider | None  # None: the offline policy
    tracker: BudgetTracker
    progress: Progress
    # the test seams (agents/core/seams.py): empty in every real run
    seams: Seams = field(default_factory=Seams)
    # where candidates are judged (benchmarks/executor): one handed in by the caller (a bench
    # shares its own across runs), else built from the settings on first use (judge_executor)
    executor: Any = None
    _owns_executor: bool = field(default=False, repr=False)
    _executor_said: bool = field(default=False, repr=False)
    _baselines: Any = field(default=None, repr=False)  # the future of `baselines_ahead`

    def judge_executor(self) -> Any:
        """The run's executor: the caller's, or one built from judge.executor and its sizes
        the first time it is asked for (then closed by `close_executor` when the run ends)."""
        if self.executor is None:
            from benchmarks import ExecutorSpec, make_executor

            cfg = self.config
            self.executor = make_executor(
                ExecutorSpec(
                    cfg.executor,
                    device=self.device,
                    lanes=cfg.judge_lanes,
                    compile_workers=cfg.compile_workers,
                    ray_address=cfg.ray_address,
                )
            )
            self._owns_executor = True
        if not self._executor_said:  # the run's events say once where its candidates were judged
            self._executor_said = True
            from agents.core.judging import baselines_ahead

            # the task's baselines measured on the GPU while the first candidate is compiled
            self._baselines = baselines_ahead(self, self.executor)
            self.event(
                "executor",
                executor=self.executor.kind,
                describe=self.executor.describe(),
                shared=not self._owns_executor,
                baselines_ahead=self._baselines is not None,
            )
        return self.executor

    def close_executor(self) -> None:
        """End the executor this run built (one handed in stays with its owner)."""
        if self._owns_executor and self.executor is not None:
            self.executor.close()
            self.executor, self._owns_executor = None, False

    @property
    def can_measure(self) -> bool:
        """Whether a speed difference can be measured here (a GPU, or the scripted_measure test
        seam: a scripted sweep alone ranks, it does not re-measure)."""
        return self.device == "cuda" or self.seams.scripted_measure is not None

    def open_kb(self) -> Any:
        """The knowledge base: the project's own, or the `open_kb` test seam's."""
        if self.seams.open_kb is not None:
            return self.seams.open_kb()
        kb = default_open_kb(self.config.kb_timeout_s)
        kb.on_progress = self.progress.step  # a first build takes minutes: lines as it goes
        return kb

    def event(self, kind: str, **fields: Any) -> dict[str, Any]:
        return self.run.event(kind, **fields)

    def complete(
        self, node: str, messages: list[Message], system: str, max_tokens: int = 8192
    ) -> Completion:
        """One model call. The budget reserves its worst case first (BudgetExceeded when it
        cannot fit; the request's max_tokens is lowered to what fits), every failed request is
        logged and counted as it happens, the usage is recorded after, and the reply is cut to
        `llm.reply_chars` before anything keeps it."""
        if self.provider is None:
            raise RuntimeError(f"node {node} asked for a model in an offline run (a bug)")
        self.tracker.check()
        # no configured secret is sent to the model or comes back into the run (redact.py)
        messages = [m.model_copy(update={"content": scrub(m.content)}) for m in messages]
        system = scrub(system)
        held = self.tracker.reserve(
            node,
            [system, *(m.content for m in messages)],
            max_tokens=max_tokens,
            price=self.provider.price(),
            min_reply_tokens=self.config.min_reply_tokens,
        )
        try:
            completion = self.provider.complete(
                messages,
                system=system,
                max_tokens=held.max_tokens,
                node=node,
                on_failure=lambda failed: self._failed_request(node, failed),
            )
        except Exception:
            self.tracker.release(held)  # no answer: nothing spent (a kill leaves it in flight)
            raise
        text, cut = clip(
            scrub(completion.text), self.config.reply_chars, "reply", "llm.reply_chars"
        )
        completion = completion.model_copy(
            update={"text": text, "cut_from_chars": cut.total if cut else None}
        )
        self.tracker.settle(held, completion)
        usage = completion.usage
        self.event(
            "llm_call",
            node=node,
            provider=completion.provider,
            model=completion.model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            tokens_estimated=usage.estimated,
            estimated_input_tokens=held.input_tokens,
            max_tokens=held.max_tokens,
            max_tokens_capped=held.max_tokens < max_tokens,
            cost_usd=usage.cost_usd,
            latency_s=round(completion.latency_s, 3),
            attempts=completion.attempts,
            truncated=completion.truncated,
            scripted=completion.scripted,
            reply_cut=cut.to_json() if cut else None,
        )
        if held.max_tokens < max_tokens:
            self.progress.note(
                f"{node}: reply capped at {held.max_tokens} tokens (of {max_tokens}) by what is "
                "left of the budget",
                style="yellow",
            )
        if cut:
            self.progress.note(
                f"{node}: the reply had {cut.total} characters; the first {cut.kept} are kept "
                "(llm.reply_chars)",
                style="yellow",
            )
        return completion

    def _failed_request(self, node: str, failed: FailedAttempt) -> None:
        """Log and count one request of a model call that failed and is retried (or not)."""
        count = self.tracker.count_fault(f"llm_{failed.reason}")
        self.event(
            "llm_fault",
            node=node,
            reason=failed.reason,
            attempt=failed.attempt,
            attempts=failed.attempts,
            retry_in_s=None if failed.retry_in_s is None else round(failed.retry_in_s, 3),
            error=str(failed.error),
            count=count,
        )
        then = (
            f"retry {failed.attempt}/{failed.attempts - 1} in {failed.retry_in_s:.1f} s"
            if failed.retry_in_s is not None
            else f"giving up after {failed.attempt} attempts (llm.attempts)"
        )
        self.progress.note(f"{node}: {failed.error}; {then}", style="yellow")

    def save_spend(self) -> None:
        """Write budget.json now: through the tracker's ledger, or as a plain snapshot."""
        if self.tracker.ledger is not None:
            self.tracker.save()
        else:
            self.run.write_budget(self.tracker.snapshot())

    def llm_updates(self) -> dict[str, Any]:
        """State updates every node that may have called the model returns: spend and replay
        position, so `--resume` continues counting and replaying where the checkpoint stands."""
        updates: dict[str, Any] = {"spend": self.tracker.snapshot()}
        if isinstance(self.provider, ReplayProvider):
            updates["replay_served"] = sorted(set(self.provider.served))
        return updates

    @property
    def policy(self) -> Policy:
        """Who makes this run's decisions: the model's policy when a provider is set, else the
        offline policy (the interface: agents/core/policy.py). Chosen from the provider, so a resumed run whose
        provider is set after the context is built gets the right one."""
        return policy_for(self.provider is None)


def policy_for(offline: bool) -> Policy:
    """The offline policy when there is no model, else the model's."""
    return OfflinePolicy() if offline else ModelPolicy()
