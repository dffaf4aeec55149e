"""generator: propose a new kernel. The graph runs it N times in parallel (one `Send` per slot);
each call gets a job: its slot, whether it writes afresh or repairs a failed parent, and the
facts the prompt needs (retrieved knowledge, the visible history, the reflector's diagnosis).

With a model: prompts/generator.md.j2 (fresh) or prompts/repair.md.j2 (repair), system prompt
prompts/system.md.j2; a reply without code is fed back (agents/core/ask.py).
Offline: the next reference kernel not yet tried (agents/offline/policy.py).
"""

from __future__ import annotations

import hashlib
from typing import Any, TypedDict

from agents.core.ask import ask_for_code
from agents.core.context import RunContext
from agents.core.llm.base import BudgetExceeded
from agents.core.prompting import history_rows, render, task_contract
from agents.core.state import Attempt, Candidate
from agents.offline.policy import diagnose, tunable_values


class GeneratorJob(TypedDict):
    slot: int
    candidates: int
    mode: str  # "fresh" or "repair"
    iteration: int
    parent: Attempt | None  # the failed attempt to repair
    reflection: dict[str, Any] | None
    retrieved: list[dict[str, Any]]
    knowledge_note: str
    references: list[dict[str, Any]]
    tried: list[str]  # reference ids already used (offline)
    history: list[Attempt]
    incumbent_id: int | None
    device_info: dict[str, Any]
    model_test: str | None  # the model-written test (agent.llm_tests), shown in the prompt


def candidate_key(iteration: int, slot: int, mode: str, parent_id: int | None, code: str) -> str:
    text = f"{iteration}|{slot}|{mode}|{parent_id}|{code}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def knowledge_rows(retrieved: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Retrieved items as the prompt shows them: the best kernel in full, the rest as snippets."""
    rows = []
    shown_kernel = False
    for hit in retrieved:
        body = hit.get("snippet", "")
        if hit.get("kind") == "kernel" and not shown_kernel and hit.get("text"):
            body = f"```python\n{hit['text'].strip()}\n```"
            shown_kernel = True
        rows.append(
            {
                "title": hit["title"],
                "kind": hit["kind"],
                "tier": hit["tier"],
                "path": hit["path"],
                "body": body,
            }
        )
    return rows


def generator(job: GeneratorJob, ctx: RunContext) -> dict[str, Any]:
    if ctx.offline:
        return _offline(job, ctx)
    return _with_model(job, ctx)


def _offline(job: GeneratorJob, ctx: RunContext) -> dict[str, Any]:
    untried = [r for r in job["references"] if r["id"] not in job["tried"]]
    if job["slot"] >= len(untried):
        ctx.event(
            "generator",
            slot=job["slot"],
            mode=job["mode"],
            note="offline policy: no untried reference kernel left",
        )
        return {}
    ref = untried[job["slot"]]
    code = ref["source"]
    parent_id = None  # a different reference is a fresh start, not a fix of the failed kernel
    prompt = (
        f"# offline policy\n\nNo model. Reference kernel `{ref['id']}` from {ref['path']} ({ref['how']}); "
        f"tunables {ref['tunables'] or 'none exposed by the entry point'}.\n"
    )
    if job["reflection"]:
        prompt += f"\nPrevious diagnosis (rules): {job['reflection']['diagnosis']}\n"
    ctx.event("generator", slot=job["slot"], mode=job["mode"], origin=ref["id"], how=ref["how"])
    return {
        "pending": [
            Candidate(
                key=candidate_key(job["iteration"], job["slot"], job["mode"], parent_id, code),
                slot=job["slot"],
                node="generator",
                mode=job["mode"],
                iteration=job["iteration"],
                parent_id=parent_id,
                code=code,
                prompt=prompt,
                origin=ref["id"],
                tunables={
                    k: v
                    for k, v in tunable_values(code, ctx.task.entry_point).items()
                    if k in ref["tunables"]
                },
            )
        ]
    }


def _with_model(job: GeneratorJob, ctx: RunContext) -> dict[str, Any]:
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
            "message": parent.verdict.message,
            "model_test": parent.model_test,
        }
        # the reflector's diagnosis of this parent, else the rules' reading of its verdict
        reflection = job["reflection"] or {"by": "rules", **diagnose(parent.verdict)}
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
    try:
        reply = ask_for_code(ctx, "generator", system, prompt)
    except BudgetExceeded as exc:
        ctx.event("budget_stop", node="generator", reason=str(exc))
        return {"stop_reason": str(exc), **ctx.llm_updates()}
    updates: dict[str, Any] = {"nocode_errors": reply.nocode, **ctx.llm_updates()}
    if reply.code is None:
        ctx.event(
            "generator",
            slot=job["slot"],
            mode=job["mode"],
            note=f"no usable code after {reply.nocode} replies",
        )
        return updates
    parent_id = parent.id if parent is not None else None
    ctx.event(
        "generator",
        slot=job["slot"],
        mode=job["mode"],
        parent=parent_id,
        nocode_replies=reply.nocode,
    )
    updates["pending"] = [
        Candidate(
            key=candidate_key(job["iteration"], job["slot"], job["mode"], parent_id, reply.code),
            slot=job["slot"],
            node="generator",
            mode=job["mode"],
            iteration=job["iteration"],
            parent_id=parent_id,
            code=reply.code,
            prompt=reply.prompt_md,
            reply=reply.reply_md,
            origin=ctx.provider.describe() if ctx.provider else "",
        )
    ]
    return updates
