"""The model's policy: each decision is a prompt (prompts/*.j2, system prompt
prompts/system.md.j2) sent through agents/core/ask.py, which feeds a reply without code back.

- generate: prompts/generator.md.j2 (fresh: the task, the retrieved knowledge, the history) or
  prompts/repair.md.j2 (the failed kernel, its verdict and the reflector's diagnosis);
- diagnose: the rules' reading, then with `agent.reflect` the model's (prompts/reflector.md.j2);
- optimize: first the configuration sweep the offline policy runs (agents/offline/sweep.py) when
  the incumbent declares tunables (`KB_META["tunables"]` and the entry point's keyword defaults,
  as the prompts ask) and a sweep can rank here: once per design of a kernel, then its gated
  finalists one per round, judged like any candidate. With no space, no sweep, or the finalists
  spent: prompts/optimizer.md.j2 with the incumbent, its timings, the profile, the sweep's
  ranking and the history; the reply starts with `CHANGE:` and `PREDICTED_GAIN:` lines, then
  the module;
- write_test: prompts/write_test.md.j2 (agent.llm_tests).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from agents.core.ask import CodeReply, ask_for_code, ask_for_text
from agents.core.clip import clip
from agents.core.diagnosis import diagnose as rules_diagnosis
from agents.core.model_tests import KERNEL_FILE, TEST_FILE
from agents.core.policy import Proposal
from agents.core.prompting import history_rows, render, task_contract
from agents.core.state import (
    AgentState,
    Attempt,
    Candidate,
    Provenance,
    best_correct,
    is_template,
    optimized_from,
    visible_history,
)
from agents.offline.policy import reference_kernels
from agents.offline.sweep import TOP_SHOWN, Sweeper, prepare_sweep, sweep_step
from agents.offline.tunables import configuration, declared_space, design_key, kb_meta

if TYPE_CHECKING:
    from agents.core.context import RunContext
    from agents.core.nodes.generator import GeneratorJob

_CHANGE = re.compile(r"^\s*\**CHANGE\**\s*:\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_GAIN = re.compile(
    r"^\s*\**PREDICTED[_ ]GAIN\**\s*:\s*([+-]?\d+(?:\.\d+)?)\s*(%|x|×)?",
    re.IGNORECASE | re.MULTILINE,
)


def parse_proposal(text: str) -> tuple[str, float | None]:
    """(what changes, predicted gain as a fraction) from an optimizer reply."""
    change = _CHANGE.search(text)
    gain = _GAIN.search(text)
    predicted = None
    if gain:
        value = float(gain.group(1))
        unit = (gain.group(2) or "%").lower()
        predicted = value - 1.0 if unit in ("x", "×") else value / 100.0
    return (change.group(1).strip() if change else ""), predicted


def knowledge_rows(retrieved: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Retrieved items as the prompt shows them: the best kernel in full, and the best template
    in full as well (a template is a kernel family written to be adapted), the rest as
    snippets; every kernel with the tunables its KB_META declares."""
    rows = []
    shown_kernel = shown_template = False
    for hit in retrieved:
        body = hit.get("snippet", "")
        text = hit.get("text") or ""
        kernel = hit.get("kind") == "kernel"
        template = kernel and is_template(hit.get("path") or "")
        if kernel and text and (not shown_kernel or (template and not shown_template)):
            body = f"```python\n{_capped(text.strip())}\n```"
            shown_kernel = True
            shown_template = shown_template or template
        declared = (kb_meta(text) or {}).get("tunables") if kernel else None
        rows.append(
            {
                "title": hit["title"],
                "kind": "template kernel" if template else hit["kind"],
                "tier": hit["tier"],
                "path": hit["path"],
                "body": body,
                "tunables": tunables_line(declared) if isinstance(declared, dict) else "",
            }
        )
    return rows


# The most of one retrieved kernel a prompt shows in full: every kernel the knowledge base ships
# fits (the longest, tpl_decode_attention, is 13.8 KB), and two shown kernels (the best neighbour
# and the best template) stay within ~32 KB of the prompt whatever is indexed later or imported.
FULL_KERNEL_CHARS = 16000


def _capped(text: str, limit: int = FULL_KERNEL_CHARS) -> str:
    """`text` whole when it fits in `limit` characters, else its first whole lines that do and a
    comment saying how many lines were left out."""
    if len(text) <= limit:
        return text
    kept = text[:limit].rsplit("\n", 1)[0]
    left = text.count("\n") - kept.count("\n")
    return f"{kept}\n# ... ({left} more lines not shown: the prompt shows at most {limit} characters of a kernel)"


def tunables_line(space: dict[str, Any]) -> str:
    """A declared tunable space in one line: `BLOCK_N in [1024, 2048]; num_warps in [4, 8]`."""
    return "; ".join(f"{name} in {list(values)}" for name, values in space.items())


def sweep_view(record: dict[str, Any], attempts: list[Attempt]) -> dict[str, Any]:
    """A sweep's record (agents/offline/search.py sweep_record) as the optimizer prompt shows it:
    its fastest TOP_SHOWN configurations against the incumbent's own time, and what became of
    the finalists judged so far."""
    baseline = record["baseline_us"]

    def speedup(score: float) -> str:
        return f"{baseline / score - 1.0:+.1%}" if baseline else "-"

    finalists = []
    for config in record["proposed"]:
        judged = next((a for a in attempts if a.tunables == config and a.node == "optimizer"), None)
        if judged is None:
            outcome = "not judged yet"
        elif not judged.passed:
            outcome = f"attempt {judged.id}: FAILED {judged.verdict.error_class}"
        else:
            outcome = f"attempt {judged.id}: " + (
                "accepted" if judged.accepted else "correct, not accepted by the re-measurement"
            )
        finalists.append({"config": config, "outcome": outcome})
    return {
        "incumbent_id": record["incumbent_id"],
        "incumbent_config": record["incumbent_config"],
        "measured": record["measured"],
        "reason": record["reason"],
        "scripted": record["scripted"],
        "configs": record["configs"],
        "failed": record["failed"],
        "how": record["how"],
        "baseline": "not measured (it failed in the sweep)"
        if baseline is None
        else f"{baseline:.2f} us",
        "gate": f"{record['gate']:.0%}",
        "top": [
            {
                "rank": i,
                "config": e["config"],
                "time": f"{e['score_us']:.2f} us",
                "speedup": speedup(e["score_us"]),
            }
            for i, e in enumerate(record["ranked"][:TOP_SHOWN], start=1)
        ],
        "finalists": finalists,
    }


def _design(
    ctx: RunContext, state: AgentState, code: str
) -> tuple[dict[str, list[Any]], str, list[dict[str, Any]]]:
    """The tunable space `code` declares (empty: none), its design's key ("" without a space)
    and the configurations the attempts of that design set."""
    entry = ctx.task.entry_point
    space = declared_space(code, entry)
    if not space:
        return space, "", []
    design = design_key(code, entry, space)
    tried = []
    for attempt in state.get("attempts", []):
        other = ctx.run.read_code(attempt)
        own = declared_space(other, entry)
        if own and design_key(other, entry, own) == design:
            tried.append(configuration(other, entry, space))
    return space, design, tried


def _device(ctx: RunContext, state: AgentState) -> dict[str, Any]:
    return state.get("device_info") or {"name": ctx.device, "peaks": "not measured"}


def _feedback(ctx: RunContext, text: str, what: str) -> str:
    """`text` as quoted to the model: cut to agent.feedback_chars, saying so."""
    return clip(text, ctx.config.feedback_chars, what, "agent.feedback_chars")[0]


def _bookkeeping(ctx: RunContext, reply: CodeReply) -> dict[str, Any]:
    return {"nocode_errors": reply.nocode, **ctx.llm_updates()}


# the model policy's sweep (agents/offline/sweep.py): its finalists are the sweep's, not the model's
SWEEPER = Sweeper(
    by="the configuration sweep", who="model policy", instead="the model is asked instead"
)


class ModelPolicy:
    """Every decision asked of the run's model (`RunContext.provider`)."""

    repairs = True
    writes_tests = True
    trusted_code = False  # model-written (or replayed) code: isolated or refused
    uses_counters = True  # the optimizer prompt shows the Nsight Compute summary

    def references(
        self, ctx: RunContext, kernel_hits: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        # kept in the state as the offline policy would find them; no prompt shows them
        return reference_kernels(ctx.task, kernel_hits, benchmark=ctx.config.benchmark)

    def nothing_left(self, state: AgentState) -> str | None:
        return None  # the model can always be asked again (the budget bounds it)

    def generate(self, ctx: RunContext, job: GeneratorJob) -> Proposal:
        task = task_contract(ctx.task)
        common = {
            "task": task,
            "device": job["device_info"],
            "history": history_rows(job["history"], job["incumbent_id"]),
            "model_test": job.get("model_test"),
        }
        parent = job["parent"] if job["mode"] == "repair" else None
        if parent is not None:
            failed = {
                "id": parent.id,
                "code": ctx.run.read_code(parent),
                "error_class": parent.verdict.error_class,
                "stage": parent.verdict.stage_reached or "nothing",
                "message": _feedback(ctx, parent.verdict.message, "judge's message"),
                "model_test": parent.model_test,
            }
            # the reflector's diagnosis of this parent, else the rules' reading of its verdict
            reflection = job["reflection"] or {"by": "rules", **rules_diagnosis(parent.verdict)}
            prompt = render(
                "repair.md.j2",
                failed=failed,
                reflection=reflection,
                slot=job["slot"],
                candidates=job["candidates"],
                **common,
            )
        else:
            prompt = render(
                "generator.md.j2",
                knowledge=knowledge_rows(job["retrieved"]),
                knowledge_note=job["knowledge_note"],
                slot=job["slot"],
                candidates=job["candidates"],
                **common,
            )
        system = render("system.md.j2", task=task, device=job["device_info"])
        reply = ask_for_code(ctx, "generator", system, prompt)
        parent_id = parent.id if parent is not None else None
        model = ctx.provider.describe() if ctx.provider else ""
        # a fresh prompt shows the retrieved knowledge (knowledge_rows); a repair prompt shows none
        shown = [str(h["id"]) for h in job["retrieved"]] if parent is None else []
        return Proposal(
            code=reply.code,
            prompt=reply.prompt_md,
            reply=reply.reply_md,
            parent_id=parent_id,
            origin=model,
            provenance=Provenance(kind="model", name=model, parent_id=parent_id, retrieved=shown),
            note=f"no usable code after {reply.nocode} replies",
            logged={"parent": parent_id, "nocode_replies": reply.nocode},
            updates=_bookkeeping(ctx, reply),
        )

    def diagnose(self, ctx: RunContext, state: AgentState, target: Attempt) -> dict[str, Any]:
        rules = rules_diagnosis(target.verdict)
        reflection: dict[str, Any] = {"attempt_id": target.id, "by": "rules", **rules}
        if not ctx.config.reflect:
            return reflection
        verdict = ctx.run.read_verdict(target.id)
        failed_view = {
            "id": target.id,
            "code": ctx.run.read_code(target),
            "error_class": target.verdict.error_class,
            "stage": target.verdict.stage_reached or "nothing",
            "message": _feedback(ctx, target.verdict.message, "judge's message"),
            "mismatch": verdict.get("mismatch"),
        }
        task = task_contract(ctx.task)
        system = render(
            "system.md.j2",
            task=task,
            device=state.get("device_info", {"name": ctx.device, "peaks": "not measured"}),
        )
        prompt = render("reflector.md.j2", task=task, failed=failed_view, rules=rules)
        text, _ = ask_for_text(ctx, "reflector", system, prompt)
        # the diagnosis goes into the repair prompt: no longer than any other feedback
        return {**reflection, "by": "llm", "diagnosis": _feedback(ctx, text.strip(), "diagnosis")}

    def ahead(self, ctx: RunContext, state: AgentState, candidate: Candidate) -> None:
        """The sweep `optimize` would run first if `candidate` becomes the incumbent (its design
        declares tunables), told to the executor now: its configurations compile while
        `candidate` is judged."""
        space, design, tried = _design(ctx, state, candidate.code)
        if not space:
            return
        current = configuration(candidate.code, ctx.task.entry_point, space)
        prepare_sweep(
            ctx,
            state,
            lineage=f"{candidate.origin}#{design}",
            code=candidate.code,
            space=space,
            current=current,
            tried=[current, *tried],
        )

    def optimize(self, ctx: RunContext, state: AgentState, best: Attempt) -> Proposal:
        """The sweep's next finalist when the incumbent declares tunables and the sweep of its
        design has one left (the sweep runs on the first call for that design); else the model's
        change, its prompt showing the sweep's ranking where there was one."""
        code = ctx.run.read_code(best)
        entry = ctx.task.entry_point
        space, design, tried = _design(ctx, state, code)
        record = None
        updates: dict[str, Any] = {}
        if space:
            step = sweep_step(
                ctx,
                state,
                best,
                lineage=f"{best.origin}#{design}",
                code=code,
                space=space,
                current=configuration(code, entry, space),
                tried=tried,
                sweeper=SWEEPER,
            )
            if step.proposal is not None:
                return step.proposal
            record = step.record
            if step.sweeps != (state.get("sweeps") or {}):
                updates = {"sweeps": step.sweeps}
        proposal = self._ask_optimizer(ctx, state, best, code, record)
        proposal.updates = {**proposal.updates, **updates}
        return proposal

    def _ask_optimizer(
        self,
        ctx: RunContext,
        state: AgentState,
        best: Attempt,
        code: str,
        record: dict[str, Any] | None,
    ) -> Proposal:
        """One change to the incumbent (source `code`), asked of the model; `record` is the
        sweep of its design, shown in the prompt, or None."""
        task = task_contract(ctx.task)
        device = _device(ctx, state)
        prof = state.get("profile") or {}
        noises = [
            a.measurement.noise
            for a in state.get("attempts", [])
            if a.measurement is not None and a.measurement.measured
        ]
        # GEAK's ancestors (agent.ancestors): the best correct kernels besides the incumbent
        others = best_correct(state, ctx.config.ancestors)[1:]
        ancestors = [
            {**row, "code": ctx.run.read_code(a)}
            for a, row in zip(others, history_rows(others, best.id), strict=True)
        ]
        prompt = render(
            "optimizer.md.j2",
            task=task,
            device=device,
            history=history_rows(visible_history(state, ctx.config.history_window), best.id),
            incumbent={"id": best.id, "code": code},
            ancestors=ancestors,
            sweep=None if record is None else sweep_view(record, state.get("attempts", [])),
            profile={
                "timing": prof.get("timing", "not measured"),
                "diagnosis": prof.get("diagnosis", "no profile"),
                "ncu": prof.get("ncu"),
            },
            noise=f"{noises[-1]:.1%}" if noises else "",
        )
        system = render("system.md.j2", task=task, device=device)
        reply = ask_for_code(ctx, "optimizer", system, prompt)
        updates = _bookkeeping(ctx, reply)
        if reply.code is None:
            note = f"no usable code after {reply.nocode} replies; the incumbent stays"
            return Proposal(code=None, note=note, updates=updates)
        change, predicted = parse_proposal(reply.text)
        stated = "?" if predicted is None else f"{predicted:+.0%}"
        return Proposal(
            code=reply.code,
            prompt=reply.prompt_md,
            reply=reply.reply_md,
            change=change,
            predicted_gain=predicted,
            provenance=optimized_from(
                best,
                f"the model {ctx.provider.describe() if ctx.provider else ''}".strip(),
                change or "(change not stated)",
            ),
            logged={
                "change": change or "(not stated)",
                "predicted_gain": predicted,
                "note": ""
                if change and predicted is not None
                else "the reply did not state CHANGE and/or PREDICTED_GAIN",
            },
            said=f"optimizer: {change or '(change not stated)'}; predicts {stated}",
            updates=updates,
        )

    def write_test(self, ctx: RunContext, state: AgentState) -> Proposal:
        task = task_contract(ctx.task)
        prompt = render(
            "write_test.md.j2",
            task=task,
            device=_device(ctx, state),
            on_cpu=ctx.device != "cuda",
            test_file=TEST_FILE,
            kernel_file=KERNEL_FILE,
        )
        system = render("write_tests_system.md.j2", task=task)
        reply = ask_for_code(ctx, "write_test", system, prompt)
        return Proposal(
            code=reply.code,
            prompt=reply.prompt_md,
            reply=reply.reply_md,
            note=f"no usable test after {reply.nocode} replies: candidates are judged without one",
            updates=_bookkeeping(ctx, reply),
        )
