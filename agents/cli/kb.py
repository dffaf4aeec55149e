"""`kernforge kb ...`: build, search, list and inspect the knowledge base.

    kernforge kb build [--force] [--kb-url URL]
    kernforge kb search "query" [--task ID] [--k N] [--hidden] [--kind kernel] [--json] [--kb-url URL]
    kernforge kb list [--kind doc] [--json] [--kb-url URL]
    kernforge kb stats [--json] [--kb-url URL]

Without --kb-url the embedded store in <repo>/.kb/ ($KERNFORGE_KB_DIR) is used; $KERNFORGE_KB_URL
sets a default server. A build (the one a first search starts included) prints a line per step
on stderr. Mount with `app.add_typer(kb_app, name="kb")`.
"""

from __future__ import annotations

from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from agents.cli.console import console, err_console, print_json, step

kb_app = typer.Typer(
    no_args_is_help=True, help="Build, search, list and inspect the knowledge base."
)

KB_URL_HELP = "chroma server URL (e.g. http://127.0.0.1:8000); default: embedded store in .kb/"
QUIET_HELP = "no progress lines on stderr"


def _die(message: str, code: int = 2) -> None:
    err_console.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


def _kb(kb_url: str | None, auto_build: bool = True, quiet: bool = False) -> Any:
    """The knowledge base at `kb_url` (else the default), its build steps printed on stderr."""
    from knowledge_base import KnowledgeBase, default_kb_url

    url = kb_url or default_kb_url()
    try:
        return KnowledgeBase(
            url=url,
            auto_build=auto_build,
            on_progress=None if quiet else step,
        )
    except Exception as exc:  # noqa: BLE001 - connection refused, bad URL, unreadable store: say which
        where = url or "the embedded store"
        said = " ".join(str(exc).split())  # chromadb's messages span lines: one line here
        _die(f"cannot open the knowledge base at {where}: {type(exc).__name__}: {said}")


@kb_app.command("build")
def build(
    force: bool = typer.Option(False, "--force", help="re-embed everything, not only what changed"),
    kb_url: str = typer.Option(None, "--kb-url", help=KB_URL_HELP),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
) -> None:
    """Index docs, kernels and hardware sheets; only changed sources are embedded."""
    from knowledge_base import CorpusError, KBTimeout

    kb = _kb(kb_url, quiet=quiet)
    try:
        report = kb.build(force=force)
    except (CorpusError, KBTimeout) as exc:
        _die(str(exc))
    for w in report.warnings:
        err_console.print(f"[yellow]warning:[/] {escape(w)}")
    console.print(
        f"[bold]{escape(report.location)}[/]: {report.sources_total} sources, {report.chunks_total} chunks; "
        f"[green]{len(report.added)} added[/], [cyan]{len(report.updated)} updated[/], "
        f"[red]{len(report.removed)} removed[/], {report.unchanged} unchanged; "
        f"{report.embedded} chunks embedded in {report.seconds:.1f} s"
    )
    for label, ids in (
        ("added", report.added),
        ("updated", report.updated),
        ("removed", report.removed),
    ):
        if ids and len(ids) <= 12:
            console.print(f"  {label}: {escape(', '.join(ids))}")


@kb_app.command("search")
def search_cmd(
    query: str = typer.Argument("", help="what to look for (may be empty when --task is given)"),
    task: str = typer.Option(None, "--task", help="task id (e.g. softmax_fp16) to query by"),
    k: int = typer.Option(5, "--k", min=1, max=50, help="number of results"),
    hidden: bool = typer.Option(
        False, "--hidden", help="hide the task's own solution and anything derived from it"
    ),
    kind: list[str] = typer.Option(None, "--kind", help="kernel and/or doc (repeatable)"),
    hardware: str = typer.Option(
        None, "--hardware", help="prefer items verified on this GPU (e.g. h200)"
    ),
    as_json: bool = typer.Option(False, "--json", help="print the hits as one JSON array"),
    kb_url: str = typer.Option(None, "--kb-url", help=KB_URL_HELP),
    quiet: bool = typer.Option(False, "--quiet", help=QUIET_HELP),
) -> None:
    """Search by text and/or task; --hidden applies benchmark-mode provenance hiding."""
    if hidden and not task:
        _die("--hidden needs --task (it hides that task's own solution)")
    kb = _kb(kb_url, quiet=quiet)
    try:
        hits = kb.search(
            query,
            k=k,
            task=task,
            hidden_task=task if hidden else None,
            kinds=tuple(kind) if kind else ("kernel", "doc"),
            hardware=hardware,
        )
    except (KeyError, ValueError) as exc:
        _die(str(exc.args[0]) if exc.args else str(exc))
    except TimeoutError as exc:  # knowledge_base.KBTimeout: the server stalled
        _die(str(exc))
    if as_json:
        print_json([h.to_dict() for h in hits])
        return
    table = Table(show_header=True, header_style="bold", show_lines=True)
    for col in ("#", "score", "tier", "kind", "id", "title / snippet"):
        table.add_column(col, overflow="fold")
    tier_style = {"proven": "green", "promising": "cyan", "cautionary": "yellow"}
    for i, h in enumerate(hits, 1):
        snippet = h.snippet.replace("\n", " ")
        snippet = snippet if len(snippet) < 240 else snippet[:239] + "…"
        section = f" — {h.section}" if h.section else ""
        table.add_row(
            str(i),
            f"{h.score:.3f}",
            f"[{tier_style.get(h.tier, 'white')}]{h.tier}[/]",
            h.kind,
            escape(h.id),
            # kernel text is full of [i, :] indexing, which rich would read as markup
            f"[bold]{escape(h.title + section)}[/]\n{escape(h.path)}\n{escape(snippet)}",
        )
    console.print(table)
    if not hits:
        console.print("no results")


@kb_app.command("list")
def list_cmd(
    kind: str = typer.Option(None, "--kind", help="only kernel or only doc sources"),
    as_json: bool = typer.Option(False, "--json", help="print the sources as one JSON array"),
    kb_url: str = typer.Option(None, "--kb-url", help=KB_URL_HELP),
) -> None:
    """One line per indexed source: id, kind, tier, chunks, title and path."""
    from benchmarks import unknown_name
    from knowledge_base import KB_KINDS, KBTimeout

    if kind is not None and kind not in KB_KINDS:
        _die(unknown_name("kind", kind, KB_KINDS))
    kb = _kb(kb_url, auto_build=False)
    try:
        rows = [r for r in kb.sources() if kind is None or r["kind"] == kind]
    except KBTimeout as exc:
        _die(str(exc))
    if as_json:
        print_json(rows)
        return
    table = Table(show_header=True, header_style="bold")
    table.add_column("id", no_wrap=True, min_width=max((len(r["id"]) for r in rows), default=2))
    for col in ("kind", "tier", "chunks", "title", "path"):
        table.add_column(col, justify="right" if col == "chunks" else "left")
    for r in rows:
        table.add_row(
            escape(r["id"]),
            str(r["kind"]),
            str(r["tier"]),
            str(r["chunks"]),
            escape(str(r["title"] or "")),
            escape(str(r["path"] or "")),
        )
    console.print(table)
    console.print(f"{len(rows)} source(s)" + ("" if rows else ": run `kernforge kb build`"))


@kb_app.command("stats")
def stats(
    as_json: bool = typer.Option(False, "--json", help="print the counts as one JSON object"),
    kb_url: str = typer.Option(None, "--kb-url", help=KB_URL_HELP),
) -> None:
    """What is indexed: sources and chunks by kind, tier and topic."""
    kb = _kb(kb_url, auto_build=False)
    try:
        s = kb.stats()
    except TimeoutError as exc:  # knowledge_base.KBTimeout: the server stalled
        _die(str(exc))
    if as_json:
        print_json(s)
        return
    console.print(
        f"[bold]{escape(s['location'])}[/] (collection {s['collection']}, {s['embedding']})"
    )
    console.print(f"{s['sources']} sources, {s['chunks']} chunks")
    table = Table(show_header=True, header_style="bold")
    table.add_column("group")
    table.add_column("counts")
    for key in ("by_kind", "by_tier", "by_topic"):
        table.add_row(
            key.removeprefix("by_"), ", ".join(f"{k}: {v}" for k, v in sorted(s[key].items()))
        )
    table.add_row("templates", ", ".join(x.removeprefix("kernel:") for x in s["templates"]) or "-")
    table.add_row(
        "task kernels", ", ".join(x.removeprefix("kernel:") for x in s["task_kernels"]) or "-"
    )
    console.print(table)
    if s["chunks"] == 0:
        console.print("[yellow]empty: run `kernforge kb build`[/]")
