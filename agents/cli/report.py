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
    from agents import api_tools
    from benchmarks import RunFileError

    def warn(skipped: list[str]) -> None:  # a damaged line, run or file: named
        for item in skipped:
            err_console.print(f"[yellow]warning:[/] {escape(item)}", soft_wrap=True)

    try:
        made = api_tools.report(paths, out=out, title=title)
    except (api_tools.InputError, RunFileError) as exc:
        warn(getattr(exc, "skipped", []))
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    warn(made.skipped)  # and the rest reported
    files, skipped = made.files, made.skipped
    if as_json:
        print_json(
            {
                "rows": len(made.rows),
                "scripted": made.scripted,
                "sources": [str(x) for x in made.sources],
                "skipped": [str(x) for x in skipped],
                "html": str(files.html),
                "markdown": str(files.markdown),
                "plots": [str(p) for p in files.plots],
            }
        )
        return
    console.print(
        f"[bold]kernforge report[/]: {len(made.rows)} rows from {len(made.sources)} source(s)"
        + (f", {made.scripted} scripted (labelled)" if made.scripted else "")
        + (f", {len(skipped)} skipped (named above)" if skipped else "")
    )
    console.print(
        f"  {escape(str(files.html))}\n  {escape(str(files.markdown))}\n  {len(files.plots)} plot(s), SVG and PNG, in {escape(str(made.out / 'plots'))}"
    )
