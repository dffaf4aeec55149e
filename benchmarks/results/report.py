"""The report of a bench, an import or runs (any mix of them): one self-contained HTML page and
a Markdown summary, rendered from the Jinja templates in `templates/`.

    write_report(rows, out_dir, sources) -> ReportFiles
      out_dir/report.html    plots inline (SVG as data: URIs); tables sortable and filterable by a
                             small inline script; no external URL, nothing fetched (the page's
                             Content-Security-Policy allows no request)
      out_dir/report.md      the same tables, plots linked from plots/*.png
      out_dir/plots/*.svg    every figure, and a .png of each beside it

Sections and tables are `benchmarks.results.report_tables`, figures
`benchmarks.results.report_plots`, numbers `benchmarks.results.analysis`. Rows from the replay
provider carry "[scripted]" in the method label in every table and legend, and imported rows
"(imported)".
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from benchmarks.results.analysis import Analysis, analyze
from benchmarks.results.report_plots import PLOT_NAMES, Figure, make_plots
from benchmarks.results.report_tables import (
    IMPORTED_NOTE,
    SCRIPTED_NOTE,
    Section,
    provenance,
    sections,
)
from benchmarks.results.rows import IMPORTED_MARK, ResultRow

TEMPLATES = Path(__file__).with_name("templates")


@dataclass
class ReportFiles:
    html: Path
    markdown: Path
    plots: list[Path]  # plots/*.svg (the figures the page embeds)
    pngs: list[Path]  # plots/*.png, one beside each svg


def _html_cell(text: str) -> Markup:
    """A table cell's text, escaped, with the [scripted] and (imported) labels marked."""
    out = escape(text)
    out = out.replace("[scripted]", Markup('<span class="scripted">[scripted]</span>'))
    return out.replace(IMPORTED_MARK, Markup(f'<span class="imported">{IMPORTED_MARK}</span>'))


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["cell"] = _html_cell
    env.filters["md"] = _md_cell
    return env


_ENV = _environment()


def _notes(a: Analysis) -> list[str]:
    notes = []
    if any(r.scripted for r in a.rows):
        notes.append(SCRIPTED_NOTE)
    if any(r.imported for r in a.rows):
        notes.append(IMPORTED_NOTE)
    return notes


def render_html(
    a: Analysis, figures: dict[str, Figure], sources: list[str], title: str, parts: list[Section]
) -> str:
    svgs = {name: base64.b64encode(f.svg.encode()).decode() for name, f in figures.items()}
    return _ENV.get_template("report.html.j2").render(
        title=title,
        notes=_notes(a),
        provenance=provenance(a, sources),
        sections=parts,
        svgs=svgs,
    )


def render_markdown(
    a: Analysis, pngs: dict[str, str], sources: list[str], title: str, parts: list[Section]
) -> str:
    return _ENV.get_template("report.md.j2").render(
        title=title,
        notes=_notes(a),
        provenance=provenance(a, sources),
        sections=parts,
        pngs=pngs,
    )


def write_report(
    rows: list[ResultRow],
    out_dir: str | Path,
    sources: list[str] | None = None,
    title: str = "kernforge report",
    weights: dict[str, float] | None = None,
) -> ReportFiles:
    """Analyse `rows` and write report.html, report.md and plots/*.svg + *.png into `out_dir`."""
    out_dir = Path(out_dir)
    plots_dir = out_dir / "plots"
    plots_dir.mkdir(parents=True, exist_ok=True)
    sources = sources or []
    a = analyze(rows, weights)
    figures = make_plots(a)
    for name in set(PLOT_NAMES) - set(figures):  # an earlier report's plot this one cannot draw
        for suffix in (".svg", ".png"):
            (plots_dir / f"{name}{suffix}").unlink(missing_ok=True)
    svgs, pngs = [], []
    for name, figure in figures.items():
        svgs.append(plots_dir / f"{name}.svg")
        svgs[-1].write_text(figure.svg, encoding="utf-8")
        pngs.append(plots_dir / f"{name}.png")
        pngs[-1].write_bytes(figure.png)
    parts = sections(a)
    html_path, md_path = out_dir / "report.html", out_dir / "report.md"
    html_path.write_text(render_html(a, figures, sources, title, parts), encoding="utf-8")
    links = {name: f"plots/{name}.png" for name in figures}
    md_path.write_text(render_markdown(a, links, sources, title, parts), encoding="utf-8")
    return ReportFiles(html_path, md_path, svgs, pngs)
