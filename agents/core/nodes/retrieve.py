"""retrieve: what the agent knows before it writes a line: the device and its ceilings, the
knowledge base's documents and kernels for this task (`retrieved`: what the prompts show, the
templates among the kernel hits included), and the reference kernels the run's policy may start
from (`ctx.policy.references`).

The knowledge base is optional unless `kb = "on"`: with `kb = "auto"` a failure to open, build or
search it is logged and the run goes on without retrieved knowledge (in normal mode the
references still hold the task's own solution). In benchmark mode every search hides the task, and
the task's own solution is never read.
"""

from __future__ import annotations

from typing import Any

from agents.core.context import RunContext
from agents.core.prompting import device_info
from agents.core.state import AgentState, is_template

KNOWLEDGE_HITS = 5
KERNEL_HITS = 4
KB_ATTEMPTS = 2  # a stalled knowledge-base server is asked twice, then done without


def _hit_row(hit: Any) -> dict[str, Any]:
    return {
        "id": hit.id,
        "kind": hit.kind,
        "title": hit.title,
        "path": hit.path,
        "tier": hit.tier,
        "score": round(float(hit.score), 4),
        "snippet": hit.snippet,
        "text": hit.text,
    }


def search_kb(ctx: RunContext) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """(knowledge hits, kernel hits, note). Raises only when kb = "on" and the KB fails.

    A chroma server that does not answer within kb.timeout is a stalled service: logged
    (`service_stalled`), counted (budget.json `faults.kb_stalled`) and tried KB_ATTEMPTS times."""
    mode = ctx.config.kb
    if mode == "off":
        return [], [], "knowledge base off (kb = off)"
    hidden = ctx.task.id if ctx.config.benchmark else None
    ctx.progress.step(
        f"retrieve: searching the knowledge base for {ctx.task.id}"
        + (" (its own solution hidden)" if hidden else "")
    )
    failure = ""
    for attempt in range(1, KB_ATTEMPTS + 1):
        try:
            kb = ctx.open_kb()
            knowledge = kb.search("", k=KNOWLEDGE_HITS, task=ctx.task, hidden_task=hidden)
            kernels = kb.search(
                "", k=KERNEL_HITS, task=ctx.task, hidden_task=hidden, kinds=("kernel",)
            )
        except TimeoutError as exc:  # knowledge_base.KBTimeout: a server that does not answer
            failure = f"{exc} (kb.timeout)"
            count = ctx.tracker.count_fault("kb_stalled")
            again = attempt < KB_ATTEMPTS
            ctx.event(
                "service_stalled",
                service="knowledge base",
                attempt=attempt,
                attempts=KB_ATTEMPTS,
                error=failure,
                count=count,
                retrying=again,
            )
            ctx.progress.note(
                f"retrieve: {failure}; {'trying once more' if again else 'giving up'}",
                style="yellow",
            )
            continue
        except (
            Exception
        ) as exc:  # chromadb, embeddings, a missing model: the KB is optional in auto
            failure = f"{type(exc).__name__}: {exc}"
            break
        hidden_note = f", task {hidden} hidden" if hidden else ""
        return (
            [_hit_row(h) for h in knowledge],
            [_hit_row(h) for h in kernels],
            f"{len(knowledge)} documents/kernels retrieved{hidden_note}",
        )
    if mode == "on":
        raise RuntimeError(f"the knowledge base is required (kb = on) but failed: {failure}")
    return [], [], f"knowledge base unavailable ({failure}); continuing without it"


def shown_hits(
    knowledge: list[dict[str, Any]], kernel_hits: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """What the prompts show: the knowledge hits, and after them every template among the
    kernel hits that they left out (a template is a kernel family written to be adapted, so
    one the kernel search found reaches the model even when documents filled the other list)."""
    ids = {h["id"] for h in knowledge}
    return [*knowledge, *(h for h in kernel_hits if h["id"] not in ids and is_template(h["path"]))]


def retrieve(state: AgentState, ctx: RunContext) -> dict[str, Any]:
    device = device_info(ctx.device, ctx.task)
    ctx.event("device", **device)
    knowledge, kernel_hits, note = search_kb(ctx)
    ctx.event(
        "retrieve",
        note=note,
        hits=[{k: h[k] for k in ("id", "kind", "path", "tier", "score")} for h in knowledge],
        kernel_hits=[h["id"] for h in kernel_hits],
        benchmark=ctx.config.benchmark,
    )
    ctx.progress.note(f"retrieve: {note}")
    references = ctx.policy.references(ctx, kernel_hits)
    return {
        "task_id": ctx.task.id,
        "device_info": device,
        "retrieved": [
            {k: v for k, v in h.items() if k != "text" or h["kind"] == "kernel"}
            for h in shown_hits(knowledge, kernel_hits)
        ],
        "references": references,
        "knowledge_note": note,
    }
