"""Asking the model for a kernel, and feeding a reply without usable code back to it.

A reply with no usable code block (`agents.core.llm.extract.NoCodeError`) is a recoverable error: the
model gets its own reply back with what was wrong (prompts/nocode.md.j2) and asks again, at most
`agent.nocode_retries` times. Every such reply is counted and logged; the reply quoted back is
cut to `agent.feedback_chars`, and the prompt says how much of it is shown. Errors that
repeating will not fix (budget spent, bad key, replay script exhausted) propagate to the node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agents.core.clip import clip
from agents.core.llm.base import Message
from agents.core.llm.extract import NoCodeError, require_code
from agents.core.prompting import render

if TYPE_CHECKING:
    from agents.core.context import RunContext


@dataclass
class CodeReply:
    code: str | None  # None: no usable code after every retry
    prompt_md: str  # what was asked (system prompt and every user turn), for prompt.md
    reply_md: str  # what the model answered (every turn), for reply.md
    text: str = ""  # the reply the code came from
    nocode: int = 0  # replies without usable code
    errors: list[str] = field(default_factory=list)


def _transcript(system: str, messages: list[Message]) -> str:
    parts = [f"## system\n\n{system.strip()}\n"]
    parts += [f"## {m.role}\n\n{m.content.strip()}\n" for m in messages if m.role == "user"]
    return "\n".join(parts)


def ask_for_code(ctx: RunContext, node: str, system: str, prompt: str) -> CodeReply:
    """Ask until the reply holds a Python module or the retries are spent."""
    messages = [Message(role="user", content=prompt)]
    replies: list[str] = []
    errors: list[str] = []
    for turn in range(ctx.config.nocode_retries + 1):
        completion = ctx.complete(node, messages, system)
        replies.append(completion.text)
        try:
            code = require_code(completion.text)
        except NoCodeError as exc:
            errors.append(str(exc))
            # the model gets its reply back, but no more of it than agent.feedback_chars
            quoted, cut = clip(
                completion.text,
                ctx.config.feedback_chars,
                "quoted reply",
                "agent.feedback_chars",
                total=completion.cut_from_chars,
            )
            ctx.event(
                "no_code",
                node=node,
                turn=turn + 1,
                error=str(exc),
                reply_start=completion.text[:200],
                reply_chars=completion.cut_from_chars or len(completion.text),
                quoted_cut=cut.to_json() if cut else None,
            )
            ctx.progress.note(
                f"{node}: reply had no usable code ({exc}); fed back to the model", style="yellow"
            )
            messages += [
                Message(role="assistant", content=quoted),
                Message(role="user", content=render("nocode.md.j2", error=str(exc), cut=cut)),
            ]
            continue
        return CodeReply(
            code,
            _transcript(system, messages),
            _replies_md(replies),
            completion.text,
            len(errors),
            errors,
        )
    return CodeReply(
        None,
        _transcript(system, messages),
        _replies_md(replies),
        replies[-1] if replies else "",
        len(errors),
        errors,
    )


def ask_for_text(ctx: RunContext, node: str, system: str, prompt: str) -> tuple[str, str]:
    """One call whose answer is prose (the reflector). Returns (reply, prompt transcript)."""
    messages = [Message(role="user", content=prompt)]
    completion = ctx.complete(node, messages, system, max_tokens=2048)
    return completion.text, _transcript(system, messages)


def _replies_md(replies: list[str]) -> str:
    if len(replies) == 1:
        return replies[0]
    return "\n\n".join(
        f"## reply {i}\n\n{text.strip()}\n" for i, text in enumerate(replies, start=1)
    )
