"""`kernforge pairs export`: the error -> fix data set from run directories.

Mount with `app.add_typer(pairs_app, name="pairs")` (or `app.command(...)(export_cmd)` on a sub-app).
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from agents.cli.console import console, err_console, print_json

pairs_app = typer.Typer(no_args_is_help=True, help="The error -> fix data set.")


@pairs_app.command("export")
def export_cmd(
    runs: list[Path] = typer.Option(
        ...,
        "--runs",
        help="run directories or folders holding them (repeat, or list them after --runs)",
    ),
    more_runs: list[Path] = typer.Argument(
        None, metavar="[DIR]...", help="more run directories (so `--runs A B C` works)"
    ),
    fmt: str = typer.Option(
        "jsonl", "--format", help="jsonl | parquet | hf (a Hugging Face datasets folder)"
    ),
    out: Path = typer.Option(
        ...,
        "--out",
        help="output file (jsonl, parquet) or folder (hf); a README.md card is written beside it",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="print what was written, counted and skipped as one JSON object"
    ),
) -> None:
    """Collect every run's pairs.jsonl, deduplicate, and write the data set with its card."""
    from benchmarks import export_pairs

    try:
        result = export_pairs([*runs, *(more_runs or [])], fmt, out)
    except (FileNotFoundError, ValueError, RuntimeError) as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from None
    pairs = result.pairs
    scripted = sum(r.scripted for r in pairs.records)
    if as_json:
        print_json(
            {
                "pairs": len(pairs.records),
                "runs": [str(r) for r in pairs.runs],
                "duplicates": pairs.duplicates,
                "scripted": scripted,
                "skipped": list(pairs.skipped),
                "filled": dict(pairs.filled),
                "out": str(result.out),
                "card": str(result.card),
            }
        )
        return
    for item in pairs.skipped:
        console.print(f"[yellow]skipped[/] {escape(item)}")
    for name, count in sorted(pairs.filled.items()):
        console.print(f"[yellow]missing[/] {escape(name)} in {count} record(s), filled in")
    console.print(
        f"{len(pairs.records)} pair(s) from {len(pairs.runs)} run(s) ({pairs.duplicates} duplicate(s) removed, "
        f"{len(pairs.skipped)} skipped" + (f", {scripted} scripted" if scripted else "") + ")"
    )
    console.print(f"  {escape(str(result.out))}\n  {escape(str(result.card))}")
