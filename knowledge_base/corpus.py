"""What the knowledge base indexes: optimization docs, reference kernels and hardware sheets.

Every indexed thing is a `Source` (one file, or one generated hardware sheet) cut into `Chunk`s.
A source carries a content hash; the store re-embeds a source only when that hash changes.

Docs: Markdown under `docs/<topic>/<name>.md`, opening with a front matter block

    ---
    title: Masks and tails
    tier: promising            # proven | promising | cautionary
    tags: [mask, tail, boundary]
    applies_to: [elementwise, reduce, matmul]
    evidence: ...              # required for tier "proven": the measurement that backs it
    derived_from_task: ...     # optional: the task whose solution this doc was written from
    ---

and are chunked at `## ` headings (long sections again at paragraph breaks).

Kernels: `kernels/*.py`, one per task (named by the task NAME) plus templates `kernels/tpl_*.py`.
Each has a header docstring and a literal `KB_META` dict (read with `ast.literal_eval`, never
imported). A kernel is one chunk: its docstring and metadata are embedded, its full source is the
stored text.

Every source has `derived_from_task` metadata ("" when derived from no task), which is what the
hidden-provenance mode filters on.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from benchmarks import parse_python
from knowledge_base.chunks import (  # Source, Chunk and the list codec are re-exported here
    MAX_CHUNK_CHARS,
    SCHEMA_VERSION,
    Chunk,
    Source,
    chunk_markdown,
    content_hash,
    decode_list,
    encode_list,
)
from knowledge_base.solutions import is_template

__all__ = [
    "JSON_FIELDS",
    "KB_ROOT",
    "KERNEL_META_KEYS",
    "KINDS",
    "LIST_FIELDS",
    "MAX_CHUNK_CHARS",
    "REPO_ROOT",
    "SCHEMA_VERSION",
    "TIERS",
    "Chunk",
    "CorpusError",
    "Source",
    "chunk_markdown",
    "collect",
    "decode_list",
    "encode_list",
    "hardware_sources",
    "load_doc",
    "load_kernel",
    "read_kb_meta",
]

KB_ROOT = Path(__file__).resolve().parent
REPO_ROOT = KB_ROOT.parent

TIERS: tuple[str, ...] = ("proven", "promising", "cautionary")
KINDS: tuple[str, ...] = ("kernel", "doc")
KERNEL_META_KEYS: tuple[str, ...] = (
    "op_family",
    "category",
    "dtypes",
    "techniques",
    "tunables",
    "verified_on",
    "attainment",
)
# Metadata fields that hold lists; chroma stores them as ",a,b," strings (see `encode_list`).
LIST_FIELDS: tuple[str, ...] = ("dtypes", "techniques", "verified_on", "tags", "applies_to")
# Metadata fields stored as JSON strings.
JSON_FIELDS: tuple[str, ...] = ("tunables", "attainment")

# Plain words for op-family names, so a query in ordinary words ("matrix multiplication") meets
# a kernel whose metadata says "gemm".
FAMILY_WORDS: dict[str, str] = {
    "gemm": " (matrix multiplication, matmul, linear layer)",
    "gemv": " (matrix-vector product)",
    "attention": " (scaled dot-product attention)",
    "row_normalization": " (normalization over the last dimension)",
    "row_reduction": " (reduction over the last dimension)",
    "row_reduction_loss": " (loss reduced over the vocabulary)",
    "scan": " (prefix sum, cumulative)",
    "elementwise_activation": " (pointwise activation function)",
    "elementwise_math": " (pointwise math function)",
}


class CorpusError(ValueError):
    """A knowledge-base file that cannot be indexed, naming the file and the field."""

    def __init__(self, path: Path | str, field_name: str, problem: str) -> None:
        self.path = str(path)
        self.field = field_name
        super().__init__(f"{path}: {field_name}: {problem}")


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


# ------------------------------------------------------------------------------------------
# Docs
# ------------------------------------------------------------------------------------------


def parse_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    """Split `---`-delimited front matter (key: value, lists as [a, b]) from the body."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise CorpusError(
            path, "front matter", "the file must open with a '---' front matter block"
        )
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise CorpusError(path, "front matter", "no closing '---' line") from None
    meta: dict[str, Any] = {}
    for n, line in enumerate(lines[1:end], start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise CorpusError(
                path, f"front matter line {n}", f"expected 'key: value', got {line!r}"
            )
        value = value.split(" #", 1)[0].strip()
        if value.startswith("[") and value.endswith("]"):
            meta[key.strip()] = [
                v.strip().strip("'\"") for v in value[1:-1].split(",") if v.strip()
            ]
        else:
            meta[key.strip()] = value.strip("'\"")
    return meta, "\n".join(lines[end + 1 :]).strip()


_LABEL = re.compile(r"^[A-Z][\w /()-]{1,40}:")


def _split_header(body: str, limit: int = 700, min_size: int = 250) -> list[str]:
    """A kernel header docstring in pieces: at labelled lines ("Traffic:", "Tiling:") once a piece
    has some substance, and always before it grows past `limit` characters."""
    parts, cur = [], ""
    for line in body.splitlines():
        starts_section = bool(_LABEL.match(line)) and len(cur) >= min_size
        if cur and (starts_section or len(cur) + len(line) + 1 > limit):
            parts.append(cur)
            cur = line
        else:
            cur = f"{cur}\n{line}" if cur else line
    if cur.strip():
        parts.append(cur)
    return parts


def load_doc(path: Path, docs_root: Path) -> Source:
    raw = path.read_text(encoding="utf-8")
    meta, body = parse_front_matter(raw, path)
    title = meta.get("title")
    if not isinstance(title, str) or not title:
        raise CorpusError(path, "title", "missing")
    tier = meta.get("tier", "")
    if tier not in TIERS:
        raise CorpusError(path, "tier", f"must be one of {', '.join(TIERS)}, got {tier!r}")
    if tier == "proven" and not str(meta.get("evidence", "")).strip():
        raise CorpusError(path, "evidence", "tier 'proven' needs the measurement that backs it")
    for key in ("tags", "applies_to"):
        if not isinstance(meta.get(key, []), list):
            raise CorpusError(path, key, "must be a list like [a, b]")
    if not body:
        raise CorpusError(path, "body", "empty document")
    rel = path.relative_to(docs_root)
    topic = rel.parts[0] if len(rel.parts) > 1 else "general"
    chunks = chunk_markdown(title, body)
    metadata = {
        "topic": topic,
        "tags": encode_list(meta.get("tags", [])),
        "applies_to": encode_list(meta.get("applies_to", [])),
        "derived_from_task": str(meta.get("derived_from_task", "")).strip(),
        "evidence": str(meta.get("evidence", "")),
        "hardware": str(meta.get("hardware", "")).lower(),
    }
    return Source(
        source_id=f"doc:{rel.with_suffix('').as_posix()}",
        kind="doc",
        title=title,
        path=_rel(path),
        tier=tier,
        metadata=metadata,
        chunks=chunks,
        content_hash=content_hash(raw),
    )


# ------------------------------------------------------------------------------------------
# Kernels
# ------------------------------------------------------------------------------------------


def read_kb_meta(path: Path) -> tuple[str, dict[str, Any] | None]:
    """The module docstring and the literal KB_META dict of a kernel file, without importing it."""
    src = path.read_text(encoding="utf-8")
    try:
        tree = parse_python(src, filename=str(path))
    except SyntaxError as exc:
        raise CorpusError(path, "<file>", f"syntax error at line {exc.lineno}: {exc.msg}") from exc
    doc = ast.get_docstring(tree) or ""
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            targets = [node.target.id]
        if "KB_META" in targets and node.value is not None:
            try:
                meta = ast.literal_eval(node.value)
            except ValueError as exc:
                raise CorpusError(path, "KB_META", f"must be a literal dict: {exc}") from exc
            if not isinstance(meta, dict):
                raise CorpusError(path, "KB_META", "must be a dict")
            return doc, meta
    return doc, None


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return list(value)
    return list(value)


def _task_categories() -> dict[str, str]:
    """Task NAME -> category, for kernels whose KB_META is missing."""
    try:
        from benchmarks import load_all

        return {t.name: t.category for t in load_all().values()}
    except Exception:  # a broken task file elsewhere must not stop the KB build
        return {}


def load_kernel(path: Path, task_categories: dict[str, str] | None = None) -> Source:
    src = path.read_text(encoding="utf-8")
    doc, meta = read_kb_meta(path)
    warnings: list[str] = []
    template = is_template(path)
    if meta is None:
        if template:
            raise CorpusError(path, "KB_META", "a template must declare KB_META")
        cats = task_categories if task_categories is not None else _task_categories()
        warnings.append(f"{_rel(path)} has no KB_META; indexed with op_family={path.stem!r}")
        meta = {
            "op_family": path.stem,
            "category": cats.get(path.stem, ""),
            "dtypes": [],
            "techniques": [],
            "tunables": {},
            "verified_on": [],
            "attainment": {},
        }
    else:
        missing = [k for k in KERNEL_META_KEYS if k not in meta]
        if missing:
            raise CorpusError(path, "KB_META", f"missing keys {missing}")
    if template and meta.get("template") is not True:
        raise CorpusError(path, "KB_META.template", "tpl_*.py files must set 'template': True")
    if not doc.strip():
        raise CorpusError(
            path,
            "docstring",
            "a kernel must open with a header docstring (op, traffic, tiling, tunables)",
        )
    verified = _as_list(meta.get("verified_on"))
    tier = "proven" if verified else "promising"
    derived = "" if template else str(meta.get("derived_from_task", path.stem))
    title = doc.strip().splitlines()[0].rstrip(".")
    techniques = _as_list(meta.get("techniques"))
    dtypes = _as_list(meta.get("dtypes"))
    tunables = meta.get("tunables", {})
    family = str(meta.get("op_family", ""))
    summary = (
        f"op family: {family}{FAMILY_WORDS.get(family, '')}; category: {meta.get('category', '')}; "
        f"dtypes: {', '.join(map(str, dtypes))}; techniques: {', '.join(map(str, techniques))}; "
        f"tunables: {', '.join(map(str, _as_list(tunables)))}"
    )
    kind_word = "template kernel" if template else "reference kernel"
    label = f"{path.stem.replace('_', ' ')} {kind_word}: {title}"
    # Chunk 0 is short and focused (what the kernel is), so short queries match it; the header's
    # paragraphs follow as their own chunks, so a question about one aspect (traffic, tiling,
    # numerics) matches the paragraph that answers it. Every chunk stores the whole source.
    chunks = [Chunk(embed_text=f"{label}\n{summary}", text=src, section="summary")]
    body = doc.strip().split("\n", 1)[1].strip() if "\n" in doc.strip() else ""
    for i, piece in enumerate(_split_header(body) if body else []):
        chunks.append(Chunk(embed_text=f"{label}\n{piece}", text=src, section=f"header {i + 1}"))
    metadata = {
        "op_family": str(meta.get("op_family", "")).lower(),
        "category": str(meta.get("category", "")).lower(),
        "dtypes": encode_list(dtypes),
        "techniques": encode_list(techniques),
        "tunables": json.dumps(tunables, sort_keys=True, default=str),
        "verified_on": encode_list(verified),
        "attainment": json.dumps(meta.get("attainment", {}), sort_keys=True, default=str),
        "template": template,
        "derived_from_task": derived,
        "topic": "kernels",
    }
    return Source(
        source_id=f"kernel:{path.stem}",
        kind="kernel",
        title=title,
        path=_rel(path),
        tier=tier,
        metadata=metadata,
        chunks=chunks,
        content_hash=content_hash(src),
        warnings=warnings,
    )


# ------------------------------------------------------------------------------------------
# Hardware sheets
# ------------------------------------------------------------------------------------------


def hardware_sources() -> list[Source]:
    """Docs generated from `profiling.hardware` sheets, when that module is present."""
    from knowledge_base.hardware_docs import hardware_sources as generated

    return generated()


# ------------------------------------------------------------------------------------------
# Everything
# ------------------------------------------------------------------------------------------


def collect(content_root: Path = KB_ROOT, include_hardware: bool = True) -> list[Source]:
    """Every source under `content_root` (docs/ and kernels/), plus generated hardware sheets."""
    sources: list[Source] = []
    docs_root = content_root / "docs"
    if docs_root.is_dir():
        sources += [load_doc(p, docs_root) for p in sorted(docs_root.rglob("*.md"))]
    kernels_root = content_root / "kernels"
    if kernels_root.is_dir():
        cats = _task_categories()
        sources += [
            load_kernel(p, cats)
            for p in sorted(kernels_root.glob("*.py"))
            if not p.name.startswith("_")
        ]
    if include_hardware:
        sources += hardware_sources()
    seen: dict[str, str] = {}
    for s in sources:
        if s.source_id in seen:
            raise CorpusError(s.path, "id", f"duplicates {seen[s.source_id]} ({s.source_id})")
        seen[s.source_id] = s.path
    return sources
