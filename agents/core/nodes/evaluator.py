"""evaluator: the judge, then acceptance. Runs once per round on every pending candidate.

The round's candidates go to the run's executor (`ctx.judge_executor()`: benchmarks/executor,
docs/throughput.md), a few ahead, so a local or Ray executor judges them side by side; their
verdicts are read back in slot order, and each is recorded as it is read. For each candidate:
1. judge it (`benchmarks.harness.judge.evaluate`, in a child process) and write attempts/<n>/ at once;
   with agent.llm_tests, also run the model's own test on it (feedback for repairs only);
2. if it is correct: the first correct kernel becomes the incumbent; any later one must beat
   the incumbent in an interleaved re-measurement beyond the measured noise, shape by shape
   (agents/core/measure.py). The optimizer's prediction and the measured outcome go to events.jsonl.
   Without a GPU nothing can be measured, and the candidate is not accepted.
3. if it fixes failing ancestors, record the error->fix pairs (agents/core/pairs.py);
4. if it is the new incumbent, update best/.
With agent.first_success, the first correct candidate ends the round: the rest are not judged
(an event lists them).

A candidate whose attempt folder is already on disk (judged before the process was killed) is
taken from disk, not judged again, so a resumed run never duplicates or loses an attempt.
"""

from __future__ import annotations

import hashlib
from typing import Any

from agents.core.context import RunContext
from agents.core.judging import judge_config
from agents.core.measure import measure
from agents.core.model_tests import run_model_test
from agents.core.outcome import best_summary
from agents.core.pairs import failing_chain, make_pair
from agents.core.redact import scrub_data, scrub_verdict
from agents.core.state import AgentState, Attempt, Candidate, Measurement, VerdictSummary


def summarize_verdict(verdict: Any) -> VerdictSummary:
    """The routing-relevant part of a `benchmarks.verdict.Verdict`."""
    return VerdictSummary(
        passed=verdict.passed,
        stage_reached=verdict.stage_reached.value if verdict.stage_reached else None,
        error_class=verdict.error_class.value,
        message=verdict.message[:2000],
        perf_status=verdict.perf_status,
        geomean_speedup_eager=verdict.geomean_speedup_eager,
        geomean_speedup_compile=verdict.geomean_speedup_compile,
        score=verdict.score,
        candidate_us={
            s.shape: s.candidate_us for s in verdict.shapes if s.candidate_us is not None
        },
        skipped=list(verdict.skipped),
        flags=list(verdict.flags),
    )


def judge_request(ctx: RunContext, candidate: Candidate, attempt_id: int) -> Any:
    """The executor's request to judge `candidate` as attempt `attempt_id`."""
    from benchmarks import EvalRequest

    return EvalRequest.for_task(
        ctx.task,
        candidate.code,
        judge_config(ctx),
        candidate=str(ctx.run.attempt_dir(attempt_id) / "code.py"),
        label=f"attempt {attempt_id}",
        ship_task=ctx.judge_executor().kind == "ray",
    )


def judged(
    ctx: RunContext,
    candidate: Candidate,
    attempt_id: int,
    verdict: Any,
    model_test: str | None = None,
) -> Attempt:
    """The attempt from a candidate's verdict, its folder written. `model_test` is the
    model-written test (agent.llm_tests), run on the candidate as feedback beside the verdict."""
    code_path = ctx.run.attempt_dir(attempt_id) / "code.py"
    verdict = scrub_verdict(verdict)  # before it reaches the state, the checkpoint or a prompt
    if ctx.device == "cuda":
        ctx.tracker.add_gpu_s(verdict.stage_seconds.get("total", 0.0))
    tested = None
    if model_test:
        tested = scrub_data(run_model_test(model_test, candidate.code, device=ctx.device).to_json())
        ctx.event(
            "model_test",
            id=attempt_id,
            passed=tested["passed"],
            judge_passed=verdict.passed,
            returncode=tested["returncode"],
            seconds=tested["seconds"],
            isolation=tested["isolation"],
            note="feedback only: the judge decides correctness",
        )
    attempt = Attempt(
        id=attempt_id,
        parent_id=candidate.parent_id,
        node=candidate.node,
        mode=candidate.mode,
        iteration=candidate.iteration,
        slot=candidate.slot,
        key=candidate.key,
        code_path=ctx.run.rel(code_path),
        code_sha256=hashlib.sha256(candidate.code.encode()).hexdigest(),
        prompt_path=ctx.run.rel(code_path.with_name("prompt.md")) if candidate.prompt else None,
        reply_path=ctx.run.rel(code_path.with_name("reply.md")) if candidate.reply else None,
        verdict=summarize_verdict(verdict),
        change=candidate.change,
        predicted_gain=candidate.predicted_gain,
        origin=candidate.origin,
        provenance=candidate.provenance,
        tunables=dict(candidate.tunables),
        model_test=tested,
    )
    ctx.run.write_attempt(
        attempt,
        candidate.code,
        verdict.model_dump_json(indent=2),
        candidate.prompt,
        candidate.reply,
    )
    ctx.event(
        "attempt",
        id=attempt.id,
        parent=attempt.parent_id,
        node=attempt.node,
        mode=attempt.mode,
        iteration=attempt.iteration,
        provenance=attempt.provenance.label if attempt.provenance else None,
        passed=verdict.passed,
        stage_reached=attempt.verdict.stage_reached,
        error_class=attempt.verdict.error_class,
        message=verdict.message[:500],
        perf_status=verdict.perf_status,
        geomean_speedup_eager=verdict.geomean_speedup_eager,
        score=verdict.score,
        judge_s=round(verdict.stage_seconds.get("total", 0.0), 3),
    )
    return attempt


def decide(ctx: RunContext, attempt: Attempt, incumbent: Attempt | None) -> Attempt:
    """Acceptance of a correct attempt against the incumbent (measure-revise)."""
    if incumbent is None:
        ctx.event("incumbent", id=attempt.id, reason="first correct kernel")
        return attempt.model_copy(update={"accepted": True})
    if not ctx.can_measure:
        m = Measurement(
            measured=False,
            reason="not measured (no GPU): the incumbent stays",
            incumbent_id=incumbent.id,
        )
    else:
        m = measure(ctx, incumbent.id, ctx.run.read_code(incumbent), ctx.run.read_code(attempt))
    accepted = m.measured and m.significant
    ctx.event(
        "prediction_outcome",
        id=attempt.id,
        incumbent=incumbent.id,
        change=attempt.change,
        predicted_gain=attempt.predicted_gain,
        measured=m.measured,
        measured_gain=m.gain if m.measured else None,
        noise=m.noise if m.measured else None,
        significant=m.significant,
        why=m.why if m.measured else None,
        accepted=accepted,
        scripted=m.scripted,
        reason=m.reason,
    )
    if accepted:
        ctx.event(
            "incumbent",
            id=attempt.id,
            reason=f"re-measured: {m.why or f'gain {m.gain:+.2%} > noise {m.noise:.2%}'}",
            replaces=incumbent.id,
        )
    return attempt.model_copy(update={"measurement": m, "accepted": accepted})


def record_pairs(ctx: RunContext, known: dict[int, Attempt], fixed: Attempt) -> None:
    fixed_code = ctx.run.read_code(fixed)
    fixed_verdict = _verdict_json(ctx, fixed)
    for hops, failing in enumerate(failing_chain(known, fixed), start=1):
        pair = make_pair(
            failing,
            ctx.run.read_code(failing),
            _verdict_json(ctx, failing),
            fixed,
            fixed_code,
            fixed_verdict,
            hops,
        )
        if ctx.run.append_pair(pair.to_json()):
            ctx.event(
                "pair",
                failing=failing.id,
                fixing=fixed.id,
                hops=hops,
                error_class=pair.error_class,
                fix_class=pair.fix_class,
            )


def _verdict_json(ctx: RunContext, attempt: Attempt) -> dict[str, Any]:
    return ctx.run.read_verdict(attempt.id)


class _Submissions:
    """A round's candidates on the run's executor, handed over in slot order, at most its
    `slots` submitted and not yet read (the inline executor, one slot, judges each only when
    it is read: exactly the old one-by-one order; agent.first_success stops little work). Each
    candidate not already on disk gets the next attempt id, in slot order, as when they were
    judged one by one."""

    def __init__(
        self,
        ctx: RunContext,
        pending: list[Candidate],
        first_id: int,
        ahead: AgentState | None = None,
    ) -> None:
        self.ctx, self.pending = ctx, pending
        # the state, while the run has no incumbent: the round's first candidate submitted, the
        # policy starts what that candidate's optimisation would need first (Policy.ahead)
        self.ahead = ahead
        self.todo: list[tuple[int, int]] = []  # (index in pending, attempt id)
        for index, candidate in enumerate(pending):
            if ctx.run.find_attempt(candidate.key) is None:
                self.todo.append((index, first_id))
                first_id += 1
        self.futures: dict[int, Any] = {}
        self.next = 0  # position in todo of the next to submit

    def _top_up(self, upto: int) -> None:
        executor = self.ctx.judge_executor()
        while self.next < len(self.todo) and (
            self.next <= upto or len(self.futures) < executor.slots
        ):
            index, attempt_id = self.todo[self.next]
            request = judge_request(self.ctx, self.pending[index], attempt_id)
            self.futures[index] = executor.submit(request)
            if self.ahead is not None:
                self.ctx.policy.ahead(self.ctx, self.ahead, self.pending[index])
                self.ahead = None
            self.next += 1

    def verdict(self, index: int) -> tuple[int, Any]:
        """(attempt id, verdict) of the candidate at `index` of the round."""
        position = next(p for p, (i, _) in enumerate(self.todo) if i == index)
        self._top_up(position)
        candidate, attempt_id = self.pending[index], self.todo[position][1]
        self.ctx.progress.step(
            f"judge: attempt {attempt_id} ({candidate.node}/{candidate.mode}) on {self.ctx.device}"
        )
        verdict = self.futures.pop(index).result()
        return self.todo[position][1], verdict

    def drop_rest(self, index: int) -> list[int]:
        """Stop the candidates after `index`: those not started are cancelled; those already
        being judged are waited for (their time is counted) and left unrecorded. Their slots."""
        unused = []
        for later, future in sorted(self.futures.items()):
            if later <= index or future.cancel():
                continue
            verdict = future.result()
            if self.ctx.device == "cuda":
                self.ctx.tracker.add_gpu_s(verdict.stage_seconds.get("total", 0.0))
            unused.append(self.pending[later].slot)
        self.futures.clear()
        return unused


def evaluator(state: AgentState, ctx: RunContext) -> dict[str, Any]:
    pending = list(state.get("pending") or [])
    iteration = state.get("iteration", 0) + 1
    known = {a.id: a for a in state.get("attempts", [])}
    before = state.get("incumbent_id")
    incumbent_id = before
    next_id = max([0, *known, *ctx.run.attempt_ids_on_disk()]) + 1
    batch: list[Attempt] = []
    model_test = (state.get("model_test") or {}).get("code")
    if not pending:
        ctx.event("round_empty", iteration=iteration, note="no candidate to judge this round")
    queue = _Submissions(ctx, pending, next_id, state if before is None else None)
    for index, candidate in enumerate(pending):
        attempt = ctx.run.find_attempt(candidate.key)
        if attempt is not None:
            ctx.event(
                "attempt_recovered",
                id=attempt.id,
                note="judged before the process stopped; taken from disk, not judged again",
            )
        else:
            attempt_id, verdict = queue.verdict(index)
            attempt = judged(ctx, candidate, attempt_id, verdict, model_test)
        if attempt.passed and attempt.accepted is None:
            attempt = decide(
                ctx, attempt, known.get(incumbent_id) if incumbent_id is not None else None
            )
            ctx.run.update_attempt_record(attempt)
        known[attempt.id] = attempt
        batch.append(attempt)
        if attempt.accepted:
            incumbent_id = attempt.id
            summary_state = {**state, "attempts": list(known.values()), "iteration": iteration}
            summary = best_summary(ctx, summary_state, attempt, "in progress", finished=False)
            ctx.run.write_best(ctx.run.read_code(attempt), summary)
        if attempt.passed:
            record_pairs(ctx, known, attempt)
        ctx.progress.attempt(attempt)
        rest = pending[index + 1 :]
        if attempt.passed and ctx.config.first_success and rest:
            discarded = queue.drop_rest(index)
            ctx.event(
                "cancelled",
                slots=[c.slot for c in rest],
                keys=[c.key for c in rest],
                reason=f"attempt {attempt.id} is correct (agent.first_success): the rest of the round is not judged",
                judged_unused=discarded,
            )
            ctx.progress.note(
                f"attempt {attempt.id} is correct: {len(rest)} other candidate(s) of this round not judged (agent.first_success)"
            )
            break

    passed_any = any(a.passed for a in batch)
    if passed_any:
        streak = 0
    elif batch and all(a.mode != "repair" for a in batch):
        streak = 1  # every kernel of the round starts a new approach: its repairs count afresh
    else:
        streak = state.get("repair_streak", 0) + 1
    stale = 0 if incumbent_id != before or before is None else state.get("stale", 0) + 1
    ctx.save_spend()
    ctx.progress.round(
        iteration,
        ctx.config.max_iterations,
        known.get(incumbent_id) if incumbent_id is not None else None,
        ctx.tracker,
    )
    return {
        "attempts": batch,
        "pending": None,
        "iteration": iteration,
        "last_batch": [a.id for a in batch],
        "incumbent_id": incumbent_id,
        "stale": stale,
        "repair_streak": streak,
        "spend": ctx.tracker.snapshot(),
    }
