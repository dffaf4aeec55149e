"""Size caps on text a run keeps or sends back to the model, and the note that says what was cut.

    text, cut = clip(reply, 100_000, "reply", "llm.reply_chars")
    cut        # None when nothing was cut, else Cut(kept=100000, total=20971520, setting=...)

The note is appended to the kept text itself, so whoever reads it (a person in reply.md, the
model in its next prompt) sees that the rest is missing and which setting decided it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Cut:
    """What `clip` removed: `kept` of `total` characters, under `setting`."""

    kept: int
    total: int
    setting: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def clip(
    text: str, limit: int, what: str, setting: str, *, total: int | None = None
) -> tuple[str, Cut | None]:
    """`text` cut to its first `limit` characters plus a note naming `what` and `setting`, and
    what was cut (None when `text` fits). `total`: the length of the text `text` was already
    cut from, when it was (the note gives that length)."""
    if len(text) <= limit:
        return text, None
    cut = Cut(kept=limit, total=max(total or 0, len(text)), setting=setting)
    note = (
        f"\n\n[kernforge cut this {what} here: the first {limit} of its {cut.total} characters "
        f"are kept ({setting})]"
    )
    return text[:limit] + note, cut
