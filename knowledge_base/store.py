"""The vector store: one chromadb collection, embedded on disk or behind a chroma server.

- No URL: `chromadb.PersistentClient` in `<repo>/.kb/` (git-ignored), or in $KERNFORGE_KB_DIR.
- A URL (`--kb-url`, or $KERNFORGE_KB_URL): `chromadb.HttpClient` against a `chroma run` server.
  Every request to the server (connecting included) has a total deadline, `request_timeout_s`:
  one that does not answer in time raises `KBTimeout` (knowledge_base/deadline.py).

Sync is incremental by content hash. Each chunk row carries its source's hash; a build reads the
hashes already stored, re-embeds only sources whose hash changed (deleting their old chunks
first, since the chunk count may differ), adds new sources, and deletes the chunks of sources
that no longer exist. A second build with nothing changed embeds nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

from knowledge_base.corpus import REPO_ROOT, Source
from knowledge_base.deadline import KB_REQUEST_TIMEOUT_S, KBTimeout, call_within
from knowledge_base.embedding import MiniLMEmbedding

COLLECTION = "kernforge_kb"
_BATCH = 128

T = TypeVar("T")


def default_kb_dir() -> Path:
    """Where the embedded store lives: $KERNFORGE_KB_DIR, else `<repo>/.kb/`."""
    env = os.environ.get("KERNFORGE_KB_DIR")
    return Path(env).expanduser() if env else REPO_ROOT / ".kb"


def default_kb_url() -> str | None:
    """A chroma server URL from the config ($KERNFORGE_KB_URL), or None for the embedded store."""
    return os.environ.get("KERNFORGE_KB_URL") or None


def _settings() -> Any:
    from chromadb.config import Settings

    # Telemetry would try to reach the network; we never want that.
    return Settings(anonymized_telemetry=False, allow_reset=False)


def open_client(url: str | None = None, path: Path | str | None = None) -> Any:
    """A chromadb client: HTTP when `url` is given, else persistent at `path` (or the default)."""
    import chromadb

    if url:
        parsed = urlparse(url if "://" in url else f"http://{url}")
        if not parsed.hostname:
            raise ValueError(f"--kb-url {url!r} has no host; expected e.g. http://127.0.0.1:8000")
        port = parsed.port or (443 if parsed.scheme == "https" else 8000)
        return chromadb.HttpClient(
            host=parsed.hostname, port=port, ssl=parsed.scheme == "https", settings=_settings()
        )
    kb_dir = Path(path) if path is not None else default_kb_dir()
    kb_dir.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(kb_dir), settings=_settings())


@dataclass
class BuildReport:
    """What one build did. `embedded` counts chunks sent through the embedding model."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    embedded: int = 0
    chunks_total: int = 0
    sources_total: int = 0
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    location: str = ""

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


def _chunk_rows(source: Source) -> tuple[list[str], list[str], list[str], list[dict[str, Any]]]:
    ids, embed_texts, docs, metas = [], [], [], []
    for i, chunk in enumerate(source.chunks):
        ids.append(f"{source.source_id}#{i}")
        embed_texts.append(chunk.embed_text)
        docs.append(chunk.text)
        meta = {
            "source_id": source.source_id,
            "kind": source.kind,
            "title": source.title,
            "path": source.path,
            "tier": source.tier,
            "section": chunk.section,
            "chunk": i,
            "source_hash": source.content_hash,
        }
        meta.update(source.metadata)
        metas.append(meta)
    return ids, embed_texts, docs, metas


class Store:
    """One chromadb collection and the embedding function that fills it."""

    def __init__(
        self,
        url: str | None = None,
        path: Path | str | None = None,
        collection: str = COLLECTION,
        embedding: MiniLMEmbedding | None = None,
        request_timeout_s: float = KB_REQUEST_TIMEOUT_S,
    ) -> None:
        """`request_timeout_s`: the deadline of each request to a chroma server (`url`)."""
        import chromadb  # noqa: F401 (imported here, not under a request's deadline)

        if request_timeout_s <= 0:
            raise ValueError(f"request_timeout_s must be > 0, got {request_timeout_s}")
        self.url = url
        self.request_timeout_s = request_timeout_s
        self.path = None if url else Path(path) if path is not None else default_kb_dir()
        self.embedding = embedding or MiniLMEmbedding()
        self.client = self._remote("the connection", open_client, url, self.path)
        self.collection_name = collection
        self.collection = self._remote(
            "opening the collection",
            self.client.get_or_create_collection,
            name=collection,
            embedding_function=self.embedding,
            configuration={"hnsw": {"space": "cosine"}},
        )

    @property
    def location(self) -> str:
        return self.url or str(self.path)

    def _remote(self, what: str, call: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """`call(*args, **kwargs)`, under the request deadline when the store is a server."""
        if self.url is None:
            return call(*args, **kwargs)
        return call_within(
            self.request_timeout_s,
            lambda: call(*args, **kwargs),
            lambda: KBTimeout(
                f"the chroma server at {self.url} did not answer ({what}) within "
                f"{self.request_timeout_s:g} s"
            ),
        )

    def count(self) -> int:
        return int(self._remote("a count", self.collection.count))

    def stored_hashes(self) -> dict[str, tuple[str, list[str]]]:
        """source_id -> (content hash, chunk ids) for everything in the collection."""
        out: dict[str, tuple[str, list[str]]] = {}
        total = self.count()
        offset = 0
        while offset < total:
            got = self._remote(
                "a listing", self.collection.get, include=["metadatas"], limit=1000, offset=offset
            )
            for cid, meta in zip(got["ids"], got["metadatas"], strict=True):
                sid = str(meta.get("source_id", cid.split("#", 1)[0]))
                h = str(meta.get("source_hash", ""))
                prev_hash, ids = out.get(sid, (h, []))
                # Two hashes under one source (an interrupted build) count as "changed".
                out[sid] = (h if prev_hash == h else "", [*ids, cid])
            offset += len(got["ids"]) or total
        return out

    def all_metadata(self) -> list[dict[str, Any]]:
        total = self.count()
        rows: list[dict[str, Any]] = []
        offset = 0
        while offset < total:
            got = self._remote(
                "a listing", self.collection.get, include=["metadatas"], limit=1000, offset=offset
            )
            rows += [dict(m) for m in got["metadatas"]]
            offset += len(got["ids"]) or total
        return rows

    def sync(
        self,
        sources: list[Source],
        force: bool = False,
        on_progress: Callable[[str], None] | None = None,
    ) -> BuildReport:
        """Make the collection hold exactly `sources`, embedding only what changed.
        `on_progress` gets one line as embedding starts and one per batch embedded."""
        start = time.perf_counter()
        report = BuildReport(location=self.location)
        for s in sources:
            report.warnings += s.warnings
        stored = self.stored_hashes()
        wanted = {s.source_id: s for s in sources}

        stale_ids: list[str] = []
        for sid, (_, ids) in stored.items():
            if sid not in wanted:
                report.removed.append(sid)
                stale_ids += ids

        todo: list[Source] = []
        for sid, source in wanted.items():
            if sid in stored:
                old_hash, ids = stored[sid]
                if old_hash == source.content_hash and len(ids) == len(source.chunks) and not force:
                    report.unchanged += 1
                    continue
                stale_ids += ids
                report.updated.append(sid)
            else:
                report.added.append(sid)
            todo.append(source)

        for i in range(0, len(stale_ids), _BATCH * 4):
            self._remote("a delete", self.collection.delete, ids=stale_ids[i : i + _BATCH * 4])

        rows: tuple[list, list, list, list] = ([], [], [], [])
        for source in todo:
            for acc, part in zip(rows, _chunk_rows(source), strict=True):
                acc.extend(part)
        ids, embed_texts, docs, metas = rows
        if ids and on_progress is not None:
            on_progress(
                f"knowledge base {self.location}: embedding {len(ids)} chunks of {len(todo)} "
                f"source(s) ({len(wanted) - len(todo)} unchanged)"
            )
        for i in range(0, len(ids), _BATCH):
            vectors = self.embedding(embed_texts[i : i + _BATCH])
            self._remote(
                "an insert",
                self.collection.add,
                ids=ids[i : i + _BATCH],
                embeddings=vectors,
                documents=docs[i : i + _BATCH],
                metadatas=metas[i : i + _BATCH],
            )
            if on_progress is not None:
                done = min(i + _BATCH, len(ids))
                on_progress(
                    f"knowledge base: {done}/{len(ids)} chunks embedded "
                    f"({time.perf_counter() - start:.0f} s)"
                )
        report.embedded = len(ids)
        report.chunks_total = self.count()
        report.sources_total = len(wanted)
        report.seconds = time.perf_counter() - start
        return report

    def query(
        self, embedding: list[float], n: int, where: dict[str, Any] | None = None
    ) -> list[tuple[str, dict[str, Any], float]]:
        """Nearest chunks: (chunk id, metadata, cosine distance), nearest first. Documents are not
        fetched here (kernel chunks carry whole source files); `documents` gets the winners'."""
        total = self.count()
        if total == 0:
            return []
        res = self._remote(
            "a search",
            self.collection.query,
            query_embeddings=[embedding],
            n_results=max(1, min(n, total)),
            where=where or None,
            include=["metadatas", "distances"],
        )
        return list(zip(res["ids"][0], res["metadatas"][0], res["distances"][0], strict=True))

    def documents(self, ids: list[str]) -> dict[str, str]:
        """Stored text of the given chunk ids."""
        if not ids:
            return {}
        got = self._remote("a document fetch", self.collection.get, ids=ids, include=["documents"])
        return dict(zip(got["ids"], got["documents"], strict=True))
