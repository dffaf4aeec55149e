"""Scripted replies from a file, for tests and demos of the repair and optimization paths.

`--llm replay:FILE` answers every call from FILE instead of a model. FILE is JSON (a list of
entries) or JSONL (one entry per line; blank lines and lines starting with `//` are skipped).
An entry is

    {"text": "the reply", "match": "optional substring", "node": "optional node name"}

or just a string (the reply text). Each entry is served at most once. A call gets the FIRST
unused entry, in file order, whose conditions all hold:

- "match": the substring appears in the last user message or in the system prompt; a list of
  substrings must all appear (each in either place);
- "node":  the call comes from that graph node (`complete(..., node="reflector")`).

An entry without conditions fits any call, so a plain list is served strictly in order.
When every entry is used, the call raises LLMFatalError "replay script exhausted after N
responses (file X)"; when unused entries remain but none fits, the error lists why.

Replies are labelled as scripted everywhere: provider "replay", `Completion.scripted=True`,
usage estimated at len/4 tokens (`Usage.estimated=True`) and cost 0. Like a model, a reply
longer than the call's `max_tokens` is cut there (finish reason "length").
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

from agents.core.llm.base import (
    Completion,
    LLMFatalError,
    Message,
    OnFailure,
    Provider,
    Usage,
    check_messages,
    estimate_tokens,
)
from agents.core.llm.pricing import Price

_ENTRY_KEYS = {"text", "match", "node"}


def _shown(match: tuple[str, ...]) -> str | list[str]:
    return match[0] if len(match) == 1 else list(match)


@dataclass(frozen=True)
class ReplayEntry:
    text: str
    match: tuple[str, ...] = ()  # every substring must appear (empty: no condition)
    node: str | None = None

    def fits(self, last_user: str, system: str, node: str | None) -> bool:
        if self.node is not None and self.node != node:
            return False
        return all(m in last_user or m in system for m in self.match)


def load_script(path: str | Path) -> list[ReplayEntry]:
    """Read and check a replay file; errors name the file and the entry."""
    path = Path(path)
    if not path.is_file():
        raise LLMFatalError(f"replay script {path} does not exist (--llm replay:FILE)")
    raw = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        items = []
        for number, line in enumerate(raw.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("//"):
                continue
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise LLMFatalError(
                    f"replay script {path}, line {number}: not JSON: {exc}"
                ) from exc
    else:
        try:
            items = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise LLMFatalError(f"replay script {path}: not JSON: {exc}") from exc
        if not isinstance(items, list):
            raise LLMFatalError(
                f"replay script {path}: expected a JSON list of entries, got {type(items).__name__}"
            )
    return [_entry(item, index, path) for index, item in enumerate(items)]


def _entry(item: object, index: int, path: Path) -> ReplayEntry:
    where = f"replay script {path}, entry {index}"
    if isinstance(item, str):
        return ReplayEntry(text=item)
    if not isinstance(item, dict):
        raise LLMFatalError(f"{where}: expected an object or a string, got {type(item).__name__}")
    unknown = set(item) - _ENTRY_KEYS
    if unknown:
        raise LLMFatalError(
            f"{where}: unknown field(s) {sorted(unknown)}; allowed: text, match, node"
        )
    if not isinstance(item.get("text"), str):
        raise LLMFatalError(f"{where}: field 'text' is required and must be a string")
    if item.get("node") is not None and not isinstance(item["node"], str):
        raise LLMFatalError(f"{where}: field 'node' must be a string")
    match = item.get("match")
    if match is None:
        match = []
    elif isinstance(match, str):
        match = [match]
    if not isinstance(match, list) or not all(isinstance(m, str) for m in match):
        raise LLMFatalError(f"{where}: field 'match' must be a string or a list of strings")
    return ReplayEntry(text=item["text"], match=tuple(match), node=item.get("node"))


class ReplayProvider(Provider):
    """Serves scripted replies from a JSON or JSONL file (see the module docstring)."""

    name = "replay"

    def __init__(self, path: str | Path, *, already_served: list[int] | None = None) -> None:
        """`already_served` lists entry indices a resumed run has used up before."""
        self.path = Path(path)
        self.entries = load_script(self.path)
        self.served: list[int] = list(already_served or [])
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return f"scripted:{self.path.name}"

    @property
    def remaining(self) -> int:
        return len(self.entries) - len(set(self.served))

    def complete(
        self,
        messages: list[Message],
        *,
        system: str | None = None,
        max_tokens: int = 4096,
        temperature: float = 0.2,
        stop: list[str] | None = None,
        node: str | None = None,
        on_failure: OnFailure | None = None,
    ) -> Completion:
        check_messages(messages)
        last_user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        with self._lock:
            index = self._pick(last_user, system or "", node)
            self.served.append(index)
        text = self.entries[index].text
        finish = "scripted"
        if estimate_tokens(text) > max_tokens:  # as a model would: cut at the token limit
            text, finish = text[: max_tokens * 4], "length"
        prompt = (system or "") + "".join(m.content for m in messages)
        return Completion(
            text=text,
            usage=Usage(
                input_tokens=estimate_tokens(prompt),
                output_tokens=estimate_tokens(text),
                cost_usd=0.0,
                estimated=True,
            ),
            model=self.model,
            provider=self.name,
            latency_s=0.0,
            raw_finish_reason=finish,
            scripted=True,
        )

    def price(self) -> Price:
        return Price(0.0, 0.0)  # scripted replies cost nothing

    def _pick(self, last_user: str, system: str, node: str | None) -> int:
        used = set(self.served)
        unused = [i for i in range(len(self.entries)) if i not in used]
        for index in unused:
            if self.entries[index].fits(last_user, system, node):
                return index
        if not unused:
            raise LLMFatalError(
                f"replay script exhausted after {len(used)} responses (file {self.path}); "
                "add entries to the script or lower the run's iteration budget"
            )
        waiting = "; ".join(
            f"entry {i} wants"
            + (f" node={self.entries[i].node!r}" if self.entries[i].node else "")
            + (f" match={_shown(self.entries[i].match)!r}" if self.entries[i].match else "")
            for i in unused[:5]
        )
        raise LLMFatalError(
            f"no replay entry fits this call (node={node!r}, last user message starts "
            f"{last_user[:80]!r}) in file {self.path}: {len(unused)} unused entries remain, "
            f"none fits ({waiting})"
        )
