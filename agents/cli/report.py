"""`kernforge report`: an HTML page and a Markdown summary of a bench, an import or runs.

Mount with `app.command("report")(report_cmd)`.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from agents.cli.console import console, err_console, print_json


def report_cmd(
    paths: list[Path] = typer.Argument(
        ...,
        help="bench or import folders (results.jsonl), run directories, folders of runs, "
        "or results .jsonl/.parquet files; several devices' results may be combined",
    ),
    out: Path = typer.Option(
        None,
        "--out",
        help="where report.html, report.md and plots/ go (default: <first path>/report)",
    ),
    title: str = typer.Option("kernforge report", "--title", help="the page's title"),
    as_json: bool = typer.Option(
        False, "--json", help="print the files written and the rows counted as one JSON object"
    ),
) -> None:
    """Write a self-contained HTML report (plots inline, sortable tables, no network) and a
    Markdown summary; rows of several sources (benches, runs, imports) are compared in one."""
    from benchmarks import collect_rows, write_report

    try:
        rows, sources, skipped = collect_rows(paths)
    except (FileNotFoundError, ValueError) as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    for item in skipped:  # a damaged line, run or file: named, and the rest reported
        err_console.print(f"[yellow]warning:[/] {escape(item)}", soft_wrap=True)
    if not rows:
        err_console.print(
            f"[bold red]error:[/] no result rows in {', '.join(escape(str(p)) for p in paths)}",
            soft_wrap=True,
        )
        raise typer.Exit(2)
    first = paths[0]
    out = out or ((first.parent if first.is_file() else first) / "report")
    files = write_report(rows, out, [*sources, *skipped], title)
    scripted = sum(r.scripted for r in rows)
    if as_json:
        print_json(
            {
                "rows": len(rows),
                "scripted": scripted,
                "sources": [str(x) for x in sources],
                "skipped": [str(x) for x in skipped],
                "html": str(files.html),
                "markdown": str(files.markdown),
                "plots": [str(p) for p in files.plots],
            }
        )
        return
    console.print(
        f"[bold]kernforge report[/]: {len(rows)} rows from {len(sources)} source(s)"
        + (f", {scripted} scripted (labelled)" if scripted else "")
        + (f", {len(skipped)} skipped (named above)" if skipped else "")
    )
    console.print(
        f"  {escape(str(files.html))}\n  {escape(str(files.markdown))}\n  {len(files.plots)} plot(s), SVG and PNG, in {escape(str(out / 'plots'))}"
    )
