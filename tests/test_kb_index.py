"""The knowledge-base index: incremental builds, retrieval, hidden provenance, filters, tiers, CLI.

Indexes are built in tmp dirs from small content roots (a few real docs, the real kernels), so the
whole file embeds a few hundred chunks at most; the model is loaded once per process.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from knowledge_base.corpus import KB_ROOT, TIERS, CorpusError, collect, load_doc, read_kb_meta
from knowledge_base.retrieve import TIER_WEIGHT, KnowledgeBase

REAL_DOCS = KB_ROOT / "docs"
REAL_KERNELS = KB_ROOT / "kernels"


def _copy_docs(dst: Path, rel_paths: list[str]) -> None:
    for rel in rel_paths:
        target = dst / "docs" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REAL_DOCS / rel, target)


def _doc(path: Path, title: str, tier: str, body: str, **extra: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fm = "".join(f"{k}: {v}\n" for k, v in extra.items())
    path.write_text(
        f"---\ntitle: {title}\ntier: {tier}\ntags: [test]\napplies_to: [reduce]\n{fm}---\n{body}\n"
    )


# Task solutions indexed beside the templates (those present; the suite grows in parallel).
SOLUTIONS = (
    "softmax",
    "rmsnorm",
    "layernorm",
    "matmul",
    "cross_entropy",
    "embedding",
    "silu",
    "cumsum",
    "w8a8_gemm",
    "row_argmax",
)


@pytest.fixture(scope="module")
def real_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    """Real templates, some real task solutions, the generated hardware sheets, one doc topic."""
    root = tmp_path_factory.mktemp("content")
    (root / "kernels").mkdir()
    for path in sorted(REAL_KERNELS.glob("tpl_*.py")):
        shutil.copy(path, root / "kernels")
    for name in SOLUTIONS:
        if (REAL_KERNELS / f"{name}.py").is_file():
            shutil.copy(REAL_KERNELS / f"{name}.py", root / "kernels")
    shutil.copytree(REAL_DOCS / "anti_patterns", root / "docs" / "anti_patterns")
    kb = KnowledgeBase(path=tmp_path_factory.mktemp("store"), content_root=root)
    report = kb.build()
    assert report.embedded == report.chunks_total > 0
    return kb


# ------------------------------------------------------------------------------------------
# Corpus
# ------------------------------------------------------------------------------------------


def test_real_corpus_is_valid_and_large_enough():
    sources = collect(KB_ROOT, include_hardware=True)
    docs = [s for s in sources if s.source_id.startswith("doc:")]
    assert len(docs) >= 50
    assert all(s.tier in TIERS for s in sources)
    for s in sources:
        if s.tier == "proven" and s.kind == "doc":
            assert s.metadata["evidence"], f"{s.path} is proven without evidence"
        if s.kind == "kernel" and s.metadata["template"]:
            assert s.metadata["derived_from_task"] == ""
    assert any(s.source_id.startswith("hw:") for s in sources), (
        "hardware sheets come from profiling.hardware"
    )


def test_proven_doc_without_evidence_is_rejected(tmp_path: Path):
    _doc(tmp_path / "docs" / "t" / "claim.md", "A claim", "proven", "## Why\nFast.")
    with pytest.raises(CorpusError, match="evidence"):
        load_doc(tmp_path / "docs" / "t" / "claim.md", tmp_path / "docs")


def test_doc_without_front_matter_names_the_file(tmp_path: Path):
    p = tmp_path / "docs" / "t" / "bare.md"
    p.parent.mkdir(parents=True)
    p.write_text("# no front matter\n")
    with pytest.raises(CorpusError, match="bare.md"):
        load_doc(p, tmp_path / "docs")


# ------------------------------------------------------------------------------------------
# Build
# ------------------------------------------------------------------------------------------


def test_incremental_build_embeds_only_what_changed(tmp_path: Path):
    root = tmp_path / "content"
    _copy_docs(
        root,
        ["numerics/online-softmax.md", "numerics/welford-variance.md", "triton/masks-and-tails.md"],
    )
    (root / "kernels").mkdir()
    shutil.copy(REAL_KERNELS / "tpl_tiled_gemm.py", root / "kernels")
    kb = KnowledgeBase(path=tmp_path / "store", content_root=root, include_hardware=False)

    first = kb.build()
    assert len(first.added) == 4 and first.embedded == first.chunks_total

    calls_before = kb.embedding.calls
    second = kb.build()
    assert second.embedded == 0 and not second.changed and second.unchanged == 4
    assert kb.embedding.calls == calls_before, "an unchanged build must not call the model"

    # touching without changing content re-embeds nothing
    doc = root / "docs" / "numerics" / "welford-variance.md"
    doc.touch()
    assert kb.build().embedded == 0

    # editing one doc re-embeds exactly that doc's chunks
    doc.write_text(doc.read_text() + "\n## Extra\nA new section on pairwise merges.\n")
    n_chunks = len(load_doc(doc, root / "docs").chunks)
    third = kb.build()
    assert third.updated == ["doc:numerics/welford-variance"] and not third.added
    assert third.embedded == n_chunks

    # a removed file disappears from the collection
    (root / "docs" / "triton" / "masks-and-tails.md").unlink()
    fourth = kb.build()
    assert fourth.removed == ["doc:triton/masks-and-tails"] and fourth.embedded == 0
    assert all(h.id != "doc:triton/masks-and-tails" for h in kb.search("masks and tails", k=10))

    forced = kb.build(force=True)
    assert forced.embedded == forced.chunks_total


# ------------------------------------------------------------------------------------------
# Search
# ------------------------------------------------------------------------------------------


def test_search_finds_a_relevant_kernel(real_kb: KnowledgeBase):
    hits = real_kb.search("tiled matrix multiplication on tensor cores", kinds=("kernel",), k=3)
    # the template, or a GEMM reference kernel proven on a GPU (tier weighting) ahead of it
    assert "kernel:tpl_tiled_gemm" in [h.id for h in hits]
    assert hits[0].metadata["op_family"] == "gemm"
    assert all(h.kind == "kernel" for h in hits)
    hit = next(h for h in hits if h.id == "kernel:tpl_tiled_gemm")
    assert hit.text.lstrip().startswith('"""') and "@triton.jit" in hit.text  # the whole source
    assert hit.snippet.startswith("Tiled GEMM")


def test_search_by_task_prefers_its_category(real_kb: KnowledgeBase):
    hits = real_kb.search(
        "", task="softmax_fp16", hidden_task="softmax_fp16", kinds=("kernel",), k=3
    )
    assert any(h.metadata["category"] == "normalization" for h in hits)


def test_hidden_provenance_never_returns_the_tasks_own_solution(real_kb: KnowledgeBase):
    from benchmarks.loading import load_all

    tasks = load_all()
    indexed = {sid.removeprefix("kernel:") for sid in real_kb.stats()["task_kernels"]}
    solved = {t.name for t in tasks.values()} & indexed
    assert solved, "no task has a solution kernel yet"
    one_per_name = {t.name: (tid, t) for tid, t in sorted(tasks.items()) if t.name in solved}
    for task_id, task in one_per_name.values():
        hits = real_kb.search("", task=task, hidden_task=task_id, k=15)
        assert all(h.metadata.get("derived_from_task") != task.name for h in hits), task_id
        assert all(h.id != f"kernel:{task.name}" for h in hits), task_id

    # the strongest attempt: query with the solution's own header, by name as well as by id
    for name in sorted(solved):
        query, _ = read_kb_meta(REAL_KERNELS / f"{name}.py")  # its own header docstring
        visible = real_kb.search(query, kinds=("kernel",), k=3)
        assert any(h.id == f"kernel:{name}" for h in visible), "sanity: without hiding it is found"
        for hidden in (name, next(t for t in tasks if tasks[t].name == name)):  # by name and by id
            hits = real_kb.search(query, hidden_task=hidden, k=20)  # same text: embedded once
            assert all(h.id != f"kernel:{name}" for h in hits)


@pytest.mark.parametrize(
    ("task_id", "template"),
    [
        ("embedding_fp32", "tpl_row_gather"),
        ("rope_neox_qk_fp32", "tpl_rotary_half"),
        ("conv2d_1x1_fp32", "tpl_pointwise_conv"),
    ],
)
def test_a_serving_task_without_its_solution_finds_its_family_template(
    real_kb: KnowledgeBase, task_id: str, template: str
):
    from agents.core.nodes.retrieve import KERNEL_HITS

    # the retrieve node's kernel search in benchmark mode
    hits = real_kb.search("", k=KERNEL_HITS, task=task_id, hidden_task=task_id, kinds=("kernel",))
    assert f"kernel:{template}" in [h.id for h in hits]


def test_hidden_provenance_removes_docs_derived_from_the_task(tmp_path: Path):
    root = tmp_path / "content"
    body = "## Trick\nKeep the running max and rescale the sum when it grows."
    _doc(
        root / "docs" / "t" / "from-softmax.md",
        "Softmax notes",
        "promising",
        body,
        derived_from_task="softmax",
    )
    _doc(root / "docs" / "t" / "general.md", "General notes", "promising", body)
    kb = KnowledgeBase(path=tmp_path / "store", content_root=root, include_hardware=False)
    kb.build()
    assert {h.id for h in kb.search("running max rescale", k=5)} == {
        "doc:t/from-softmax",
        "doc:t/general",
    }
    assert [h.id for h in kb.search("running max rescale", k=5, hidden_task="softmax_bf16")] == [
        "doc:t/general"
    ]


def test_filters(real_kb: KnowledgeBase):
    q = "fast kernel"
    for key, value, check in [
        ("category", "matmul", lambda h: h.metadata["category"] == "matmul"),
        ("dtype", "int8", lambda h: "int8" in h.metadata["dtypes"]),
        ("template", True, lambda h: h.metadata["template"] is True),
        ("tier", "cautionary", lambda h: h.tier == "cautionary"),
        ("technique", "split_k", lambda h: "split_k" in h.metadata["techniques"]),
        # the H200 sheet, or a kernel verified on an H200 (KB_META verified_on)
        (
            "hardware",
            "NVIDIA H200",
            lambda h: (
                h.metadata.get("hardware") == "h200-sxm"
                or "h200" in str(h.metadata.get("verified_on", "")).lower()
            ),
        ),
    ]:
        hits = real_kb.search(q, k=5, filters={key: value})
        assert hits, f"filter {key}={value!r} found nothing"
        assert all(check(h) for h in hits), f"filter {key}={value!r}"
    both = real_kb.search(q, k=10, filters={"category": ["matmul", "attention"], "template": True})
    assert {h.metadata["category"] for h in both} <= {"matmul", "attention"}
    with pytest.raises(ValueError, match="unknown filter"):
        real_kb.search(q, filters={"colour": "red"})


def test_tier_weighting_orders_equal_matches(tmp_path: Path):
    root = tmp_path / "content"
    body = "## Same\nIdentical text about reducing rows with warp shuffles."
    for tier in TIERS:
        extra = {"evidence": "measured"} if tier == "proven" else {}
        _doc(root / "docs" / "t" / f"{tier}.md", "Row reduction note", tier, body, **extra)
    kb = KnowledgeBase(path=tmp_path / "store", content_root=root, include_hardware=False)
    kb.build()
    hits = kb.search("row reduction with shuffles", k=3)
    assert [h.tier for h in hits] == ["proven", "promising", "cautionary"]
    assert hits[0].similarity == pytest.approx(hits[2].similarity, abs=1e-5)
    assert hits[1].score / hits[0].score == pytest.approx(TIER_WEIGHT["promising"], rel=1e-4)


def test_hardware_sheets_are_indexed_and_boosted(real_kb: KnowledgeBase):
    from profiling.hardware import SHEETS

    assert real_kb.stats()["by_topic"]["hardware"] == len(SHEETS)
    hits = real_kb.search(
        "memory bandwidth and shared memory per SM", k=3, hardware="h200", kinds=("doc",)
    )
    assert hits[0].id == "hw:h200-sxm" and hits[0].tier == "proven"


def test_cli_search_and_stats(real_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch):
    from typer.testing import CliRunner

    from agents.cli.kb import kb_app

    monkeypatch.setenv("KERNFORGE_KB_DIR", str(real_kb.store.path))
    monkeypatch.delenv("KERNFORGE_KB_URL", raising=False)
    runner = CliRunner()
    res = runner.invoke(
        kb_app, ["search", "split-K decode GEMM", "--k", "2", "--kind", "kernel", "--json"]
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert len(rows) == 2 and all(r["kind"] == "kernel" for r in rows)
    # kernel text is full of [i, :] indexing; the table must print it, not eat it as rich markup
    res = runner.invoke(
        kb_app,
        ["search", "online softmax several rows per program", "--k", "1", "--kind", "kernel"],
    )
    assert res.exit_code == 0 and "softmax(x[i, :])" in res.output, res.output
    res = runner.invoke(kb_app, ["search", "x", "--hidden"])
    assert res.exit_code == 2
    res = runner.invoke(kb_app, ["stats"])
    assert res.exit_code == 0 and "sources" in res.output


def test_a_store_another_builder_is_filling_is_waited_for_not_read_half_built(tmp_path: Path):
    """Two runs (or bench workers) that find an embedded store empty at once: the second waits
    on the build lock while the first fills it, then finds it built and embeds nothing."""
    import threading
    import time

    root = tmp_path / "content"
    _copy_docs(
        root,
        ["anti_patterns/" + p.name for p in sorted((REAL_DOCS / "anti_patterns").glob("*.md"))[:2]],
    )
    store = tmp_path / "store"
    first = KnowledgeBase(path=store, content_root=root, include_hardware=False)
    second = KnowledgeBase(path=store, content_root=root, include_hardware=False)
    inside = threading.Event()
    built_at: list[float] = []

    def slow_builder() -> None:
        with first._building():
            inside.set()
            time.sleep(1.0)  # a first build takes minutes; the other must not search meanwhile
            first._build(False)
            built_at.append(time.monotonic())

    builder = threading.Thread(target=slow_builder)
    builder.start()
    inside.wait(30)
    second.ensure_built()  # blocks on the lock, then sees the filled store
    waited_until = time.monotonic()
    builder.join(60)
    assert built_at and waited_until >= built_at[0]
    assert second.store.count() == first.store.count() > 0
    assert second.build().embedded == 0  # nothing was built twice or left half-built
