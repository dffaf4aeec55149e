"""Recorded retrieval: the knowledge base's answers for a set of tasks, saved to one JSON file and
served back where the knowledge base itself cannot run (the GPU machine has no chromadb, and the
MiniLM model package is too large to carry there).

    python -m knowledge_base.snapshot --suite lite --out knowledge_base/snapshots/lite.json

records, for every task of the suite, the two searches the agent's retrieve node makes (documents
and kernels, `k` each) with the task hidden (benchmark mode: hidden provenance), from the live
knowledge base. `SnapshotKB(path).search(...)` answers exactly those searches and refuses any
other (a `SnapshotMiss`, which the retrieve node reports as "knowledge base unavailable").

Retrieval is deterministic (fixed embedding model, fixed corpus), so a snapshot returns what the
live knowledge base returned when it was recorded. Kernel hits carry no text in the file: their
source is read from the repository at search time, as a freshly built knowledge base would hold
it, and `code_sha` records the hash of its code (`knowledge_base.solutions.code_sha256`: comments
and blank lines left out, so commenting a kernel keeps the recording valid); `stale_kernels`
lists the kernels whose code changed since the recording (their ranking may then differ from a
live search: record again). A document hit keeps its text, under `text_sha` (sha256 of the text).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from knowledge_base.hits import Hit, _snippet, resolve_task, task_name
from knowledge_base.solutions import code_sha256

KIND = "kernforge retrieval snapshot"
# the searches the agent's retrieve node makes (agents/core/nodes/retrieve.py KNOWLEDGE_HITS, KERNEL_HITS)
SEARCHES: tuple[tuple[int, tuple[str, ...]], ...] = ((5, ("kernel", "doc")), (4, ("kernel",)))


class SnapshotMiss(LookupError):
    """A search the snapshot did not record."""


def search_key(task_id: str, hidden: str, kinds: tuple[str, ...], k: int) -> str:
    return f"{task_id}|hidden={hidden}|kinds={','.join(sorted(kinds))}|k={k}"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


REPO_ROOT = Path(__file__).resolve().parents[1]


def _repo_file(path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else REPO_ROOT / p


def _hit_record(hit: Hit, texts: dict[str, str]) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": hit.id,
        "kind": hit.kind,
        "title": hit.title,
        "path": hit.path,
        "tier": hit.tier,
        "score": hit.score,
        "similarity": hit.similarity,
        "section": hit.section,
        "metadata": hit.metadata,
    }
    if hit.kind == "kernel":  # the source is read from the repository: only its code's hash
        record["code_sha"] = code_sha256(hit.text)
    else:  # a document chunk: its text is kept (deduplicated by hash)
        record["text_sha"] = _sha(hit.text)
        texts[record["text_sha"]] = hit.text
    return record


def record(
    tasks: list[Any], kb: Any, searches: tuple[tuple[int, tuple[str, ...]], ...] = SEARCHES
) -> dict[str, Any]:
    """Run each search of `searches` for every task, with the task hidden, on the live `kb`."""
    texts: dict[str, str] = {}
    recorded: dict[str, list[dict[str, Any]]] = {}
    for task in tasks:
        hidden = task_name(task.id)
        for k, kinds in searches:
            hits = kb.search("", k=k, task=task, hidden_task=task.id, kinds=kinds)
            recorded[search_key(task.id, hidden, kinds, k)] = [_hit_record(h, texts) for h in hits]
    stats = kb.stats()
    return {
        "kind": KIND,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "knowledge_base": {
            "location": str(stats.get("location")),
            "embedding": stats.get("embedding"),
            "sources": stats.get("sources"),
            "chunks": stats.get("chunks"),
        },
        "hidden_provenance": "every search hides its task (benchmark mode)",
        "searches": recorded,
        "texts": texts,
    }


@dataclass
class SnapshotKB:
    """Serves recorded searches with the knowledge base's `search` signature."""

    path: Path
    data: dict[str, Any] = field(init=False)
    stale_kernels: set[str] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        try:
            self.data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SnapshotMiss(f"retrieval snapshot {self.path} unreadable: {exc}") from None
        if self.data.get("kind") != KIND:
            raise SnapshotMiss(f"{self.path} is not a {KIND}")

    def describe(self) -> str:
        kb = self.data.get("knowledge_base", {})
        return (
            f"retrieval snapshot {self.path.name}, recorded {self.data.get('created')} from a "
            f"knowledge base of {kb.get('sources')} sources ({kb.get('embedding')})"
        )

    def covers(self, task: Any, hidden: bool = True) -> list[str]:
        """The agent's searches for `task` that the snapshot lacks (empty: all recorded)."""
        name = task_name(task.id) if hidden else ""
        return [
            search_key(task.id, name, kinds, k)
            for k, kinds in SEARCHES
            if search_key(task.id, name, kinds, k) not in self.data["searches"]
        ]

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
        task_obj = resolve_task(task)
        if query.strip() or filters or hardware or task_obj is None:
            raise SnapshotMiss(
                f"{self.path.name} holds only the agent's task searches, not query={query!r}, "
                f"filters={filters}, hardware={hardware}"
            )
        hidden = task_name(hidden_task)
        key = search_key(task_obj.id, hidden, tuple(kinds), k)
        if key not in self.data["searches"]:
            raise SnapshotMiss(f"{self.path.name} did not record the search {key}")
        hits = []
        for rec in self.data["searches"][key]:
            meta = rec.get("metadata") or {}
            if hidden and (
                meta.get("derived_from_task") == hidden or rec["id"] == f"kernel:{hidden}"
            ):
                continue  # belt and braces, as the live search: never the hidden task's items
            hits.append(self._hit(rec))
        return hits

    def _hit(self, rec: dict[str, Any]) -> Hit:
        if rec["kind"] == "kernel":
            text = _repo_file(rec["path"]).read_text(encoding="utf-8")
            if "code_sha" in rec:
                stale = code_sha256(text) != rec["code_sha"]
            else:  # recorded before code hashes: the whole text's
                stale = _sha(text) != rec.get("text_sha")
            if stale:
                self.stale_kernels.add(rec["id"])
        else:
            text = self.data["texts"][rec["text_sha"]]
        return Hit(
            id=rec["id"],
            kind=rec["kind"],
            title=rec["title"],
            path=rec["path"],
            text=text,
            snippet=_snippet(rec["kind"], text),
            metadata=rec.get("metadata") or {},
            score=float(rec["score"]),
            tier=rec["tier"],
            similarity=float(rec.get("similarity", 0.0)),
            section=rec.get("section", ""),
        )


def main(argv: list[str] | None = None) -> int:
    from benchmarks import SUITES, suite_tasks
    from knowledge_base.retrieve import default_kb

    parser = argparse.ArgumentParser(prog="python -m knowledge_base.snapshot")
    parser.add_argument("--suite", default="lite", choices=SUITES)
    parser.add_argument(
        "--tasks", default="", help="comma-separated task ids (added to the suite's)"
    )
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    tasks = suite_tasks(args.suite)
    tasks += [resolve_task(t) for t in args.tasks.split(",") if t.strip()]
    data = record(tasks, default_kb())
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, sort_keys=True) + "\n", encoding="utf-8")
    print(
        f"{out}: {len(data['searches'])} searches for {len(tasks)} tasks, {len(data['texts'])} document chunks"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
