"""The pieces every knowledge-base source is made of: `Source`, `Chunk`, the content hash, the
list encoding chroma metadata needs, and Markdown chunking.

Both the file corpus (`knowledge_base.corpus`: docs and kernels) and the generated hardware sheets
(`knowledge_base.hardware_docs`) build their sources from these, so neither imports the other.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from knowledge_base.embedding import EMBEDDING_NAME

# Bump when chunking or metadata layout changes: every source is then re-embedded once.
SCHEMA_VERSION = "5"

MAX_CHUNK_CHARS = 1400


@dataclass
class Chunk:
    """One embedded piece of a source: `embed_text` is embedded, `text` is stored and returned."""

    embed_text: str
    text: str
    section: str = ""


@dataclass
class Source:
    """One indexed thing (a file, or one generated hardware sheet) cut into chunks."""

    source_id: str
    kind: str
    title: str
    path: str  # relative to the repository root where possible
    tier: str
    metadata: dict[str, Any]
    chunks: list[Chunk]
    content_hash: str = ""
    warnings: list[str] = field(default_factory=list)


def encode_list(values: Iterable[Any]) -> str:
    """Lists become ",a,b," so that membership is a substring test on ",a,"."""
    items = [str(v).strip().lower() for v in values if str(v).strip()]
    return "," + ",".join(items) + "," if items else ""


def decode_list(value: Any) -> list[str]:
    """The list `encode_list` wrote (empty for anything else)."""
    if not isinstance(value, str) or not value:
        return []
    return [v for v in value.strip(",").split(",") if v]


def content_hash(*parts: str) -> str:
    """The hash a source is stored under: it changes with the text, the schema or the embedding,
    so the store re-embeds exactly the sources that need it."""
    h = hashlib.sha256()
    for part in (SCHEMA_VERSION, EMBEDDING_NAME, *parts):
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()[:32]


def _split_long(body: str, limit: int) -> list[str]:
    if len(body) <= limit:
        return [body]
    parts, cur = [], ""
    for para in re.split(r"\n\s*\n", body):
        if cur and len(cur) + len(para) + 2 > limit:
            parts.append(cur)
            cur = para
        else:
            cur = f"{cur}\n\n{para}" if cur else para
    if cur:
        parts.append(cur)
    return parts


def chunk_markdown(title: str, body: str, limit: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """One chunk per `## ` section (the intro joins the first); long sections split by paragraph."""
    sections: list[tuple[str, str]] = []
    head, buf = "", []
    for line in body.splitlines():
        if line.startswith("## "):
            if "\n".join(buf).strip():
                sections.append((head, "\n".join(buf).strip()))
            head, buf = line[3:].strip(), []
        else:
            buf.append(line)
    if "\n".join(buf).strip():
        sections.append((head, "\n".join(buf).strip()))
    if len(sections) >= 2 and not sections[0][0] and len(sections[0][1]) < 400:
        intro = sections.pop(0)[1]
        sections[0] = (sections[0][0], f"{intro}\n\n{sections[0][1]}")
    chunks = []
    for head, text in sections:
        for piece in _split_long(text, limit):
            label = f"{title} — {head}" if head else title
            chunks.append(Chunk(embed_text=f"{label}\n{piece}", text=piece, section=head))
    return chunks
