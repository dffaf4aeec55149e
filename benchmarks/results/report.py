"""The report of a bench, an import or a run: one self-contained HTML page and a Markdown summary.

    write_report(rows, out_dir, sources) -> ReportFiles
      out_dir/report.html    plots inline (SVG as data: URIs), no external URL, no script
      out_dir/report.md      the same tables, plots linked from plots/
      out_dir/plots/*.svg

Sections follow `benchmarks.results.analysis`: provenance, stage pass rates, speed (geomean, fast_p,
S_agg), category x method, variance shares, iteration curves, repair bias, portability,
hardware features, then every row. Speed figures the rows do not support read "not measured"
with the reason. Rows from the replay provider carry "[scripted]" in the method label in every
table and legend, and a "scripted" column in the row listing.
"""

from __future__ import annotations

import base64
import html
import io
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.harness.ptx import FEATURES
from benchmarks.results.analysis import (
    NOT_MEASURED,
    PASS_STAGES,
    STAGE_TITLES,
    Analysis,
    analyze,
    is_measured,
)
from benchmarks.results.rows import ResultRow

SCRIPTED_NOTE = (
    "Rows labelled [scripted] come from the replay provider (or scripted measurements): their kernels "
    "were served from a script, not written by a model, and show how the pipeline behaves, not how good a model is."
)


@dataclass
class ReportFiles:
    html: Path
    markdown: Path
    plots: list[Path]


def fmt(value: Any, digits: int = 2) -> str:
    if is_measured(value):
        return f"{value:.{digits}f}"
    if value is None:
        return "—"
    return str(value)


def pct(value: float) -> str:
    return f"{100 * value:.0f}%"


# --------------------------------------------------------------------------------------------
# Plots
# --------------------------------------------------------------------------------------------


class _Plots:
    """matplotlib figures rendered to SVG text, kept by name."""

    def __init__(self, methods: list[str]) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator

        self.plt = plt
        self.locator = MaxNLocator
        plt.rcParams.update({"svg.hashsalt": "kernforge", "svg.fonttype": "path", "font.size": 9})
        palette = plt.get_cmap("tab10").colors
        self.colors = {
            m: palette[i % len(palette)] for i, m in enumerate(methods)
        }  # one colour per method everywhere
        self.svgs: dict[str, str] = {}

    def legend(self, ax: Any) -> None:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)

    def save(self, name: str, fig: Any) -> None:
        buf = io.StringIO()
        fig.savefig(
            buf,
            format="svg",
            bbox_inches="tight",
            metadata={"Creator": None, "Date": None, "Format": None, "Type": None},
        )
        self.plt.close(fig)
        # the DOCTYPE names a DTD by URL; nothing fetches it, but the page should name no URL at all
        self.svgs[name] = re.sub(r"<!DOCTYPE[^>]*>\s*", "", buf.getvalue(), count=1)

    def bars(
        self,
        name: str,
        title: str,
        groups: list[str],
        series: dict[str, list[float]],
        ylabel: str,
        ylim: tuple[float, float] | None = (0, 1),
    ) -> None:
        fig, ax = self.plt.subplots(figsize=(max(5.0, 1.1 * len(groups) + 2), 3.2))
        width = 0.8 / max(len(series), 1)
        for i, (label, values) in enumerate(series.items()):
            xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
            ax.bar(xs, values, width=width, label=label, color=self.colors.get(label))
        ax.set_xticks(range(len(groups)), groups, rotation=15, ha="right")
        ax.set_ylabel(ylabel)
        if ylim:
            ax.set_ylim(*ylim)
        ax.set_title(title)
        self.legend(ax)
        ax.grid(axis="y", alpha=0.3)
        self.save(name, fig)

    def lines(
        self,
        name: str,
        title: str,
        curves: dict[str, tuple[list[float], list[float]]],
        xlabel: str,
        ylabel: str,
        ylim: tuple[float, float] | None = (0, 1.02),
        steps: bool = False,
        integer_x: bool = False,
    ) -> None:
        fig, ax = self.plt.subplots(figsize=(5.5, 3.2))
        for label, (xs, ys) in curves.items():
            ax.plot(
                xs,
                ys,
                marker="o" if len(xs) < 12 else None,
                markersize=3,
                label=label,
                color=self.colors.get(label),
                drawstyle="steps-post" if steps else "default",
            )
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if ylim:
            ax.set_ylim(*ylim)
        if integer_x:
            ax.xaxis.set_major_locator(self.locator(integer=True))
        ax.set_title(title)
        self.legend(ax)
        ax.grid(alpha=0.3)
        self.save(name, fig)

    def heatmap(
        self,
        name: str,
        title: str,
        rows: list[str],
        cols: list[str],
        values: list[list[float | None]],
    ) -> None:
        import numpy as np

        data = np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)
        fig, ax = self.plt.subplots(
            figsize=(max(4.0, 1.3 * len(cols) + 2), max(2.5, 0.35 * len(rows) + 1.2))
        )
        im = ax.imshow(data, vmin=0, vmax=1, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(cols)), cols, rotation=15, ha="right")
        ax.set_yticks(range(len(rows)), rows)
        for i in range(len(rows)):
            for j in range(len(cols)):
                if not np.isnan(data[i, j]):
                    ax.text(
                        j,
                        i,
                        pct(data[i, j]),
                        ha="center",
                        va="center",
                        color="white" if data[i, j] < 0.6 else "black",
                        fontsize=7,
                    )
        fig.colorbar(im, ax=ax, label="correct share")
        ax.set_title(title)
        self.save(name, fig)


def _make_plots(a: Analysis) -> _Plots:
    plots = _Plots(a.speed_methods)
    stages = [STAGE_TITLES[s] for s in PASS_STAGES]
    plots.bars(
        "stage_pass_rates",
        "Stage pass rates (run outcomes)",
        stages,
        {m: [a.stage_rates[m][s].rate for s in PASS_STAGES] for m in a.methods},
        "share passing",
    )
    for baseline, curves in (("eager", a.fast_p_eager), ("compile", a.fast_p_compile)):
        measured = {m: (list(c.ps), c.values) for m, c in curves.items() if c.values is not None}
        if measured:
            plots.lines(
                f"fast_p_{baseline}",
                f"fast_p over {'PyTorch eager' if baseline == 'eager' else 'torch.compile'}",
                measured,
                "p (speedup threshold)",
                "fast_p",
                steps=True,
            )
    it = {m: pts for m, pts in a.iterations.items() if pts}
    if it:
        for key, title in (
            ("compile_rate", "Compile rate by iteration"),
            ("correct_rate", "Correct share of attempts by iteration"),
            ("solved_share", "Runs solved by iteration (cumulative)"),
        ):
            plots.lines(
                f"iteration_{key}",
                title,
                {
                    m: ([p.iteration for p in pts], [getattr(p, key) for p in pts])
                    for m, pts in it.items()
                },
                "iteration",
                "share",
                integer_x=True,
            )
        speed = {
            m: (
                [p.iteration for p in pts if is_measured(p.best_speedup)],
                [p.best_speedup for p in pts if is_measured(p.best_speedup)],
            )
            for m, pts in it.items()
        }
        speed = {m: v for m, v in speed.items() if v[0]}
        if speed:
            plots.lines(
                "iteration_best_speedup",
                "Best speedup over eager so far (geomean over solved runs)",
                speed,
                "iteration",
                "speedup",
                ylim=None,
                integer_x=True,
            )
    cats = sorted({c for c, _ in a.table})
    if cats and a.methods:
        plots.heatmap(
            "category_method",
            "Correct share: category x method",
            cats,
            a.methods,
            [
                [a.table[(c, m)].rate if (c, m) in a.table else None for m in a.methods]
                for c in cats
            ],
        )
    if a.portability.entries:
        plots.bars(
            "portability",
            "Portability: max/min speedup across GPUs",
            [f"{e.task_id}\n{e.method}" for e in a.portability.entries],
            {"max/min": [e.ratio for e in a.portability.entries]},
            "ratio",
            ylim=None,
        )
    measured_features = {m: f for m, f in a.features.items() if f.kernels}
    if measured_features:
        plots.bars(
            "hardware_features",
            "Hardware features in the PTX of correct kernels",
            list(FEATURES),
            {m: [float(f.shares[n]) for n in FEATURES] for m, f in measured_features.items()},
            "share of kernels",
        )
    return plots


# --------------------------------------------------------------------------------------------
# Tables, as (header, rows) rendered to HTML or Markdown
# --------------------------------------------------------------------------------------------

Table = tuple[list[str], list[list[str]]]


def _provenance(a: Analysis, sources: list[str]) -> list[tuple[str, str]]:
    rows = a.rows
    stamps = sorted(r.timestamp for r in rows if r.timestamp)
    models = sorted({f"{r.label()}: {r.model or 'unknown model'}" for r in rows})
    devices = sorted({r.device for r in rows})
    scripted = sum(r.scripted for r in rows)
    items = [
        (
            "rows",
            f"{len(rows)} attempts, {len(a.finals)} run outcomes (task x method x seed x device)",
        ),
        ("tasks", str(len({r.task_id for r in rows}))),
        ("methods", ", ".join(a.methods)),
        ("models", "; ".join(models)),
        ("devices", ", ".join(devices)),
        ("sources of rows", ", ".join(sorted({r.source for r in rows}))),
        (
            "scripted rows",
            f"{scripted} of {len(rows)}"
            + (" — labelled [scripted] everywhere" if scripted else ""),
        ),
        ("dates", f"{stamps[0]} … {stamps[-1]}" if stamps else "—"),
        ("read from", "; ".join(sources) if sources else "—"),
        ("written", datetime.now(UTC).isoformat(timespec="seconds")),
    ]
    flagged = [r for r in rows if "impossible_time" in r.flags]
    if flagged:
        items.append(
            (
                "impossible times",
                f"{len(flagged)} row(s) timed faster than the roofline allows (flag impossible_time): a timing bug, "
                "an undercounted formula or a cheat; their speedups are included above, see the flags column",
            )
        )
    if not any(r.perf_measured for r in rows):
        items.append(
            (
                "speed",
                "not measured: no row was timed on a GPU (the CPU interpreter checks correctness only)",
            )
        )
    return items


def _stage_table(a: Analysis) -> Table:
    head = ["method", "outcomes", *[STAGE_TITLES[s] for s in PASS_STAGES]]
    body = []
    for m in a.methods:
        rates = a.stage_rates[m]
        total = rates[PASS_STAGES[0]].total
        body.append(
            [
                m,
                str(total),
                *[f"{pct(rates[s].rate)} ({rates[s].hits}/{rates[s].total})" for s in PASS_STAGES],
            ]
        )
    return head, body


def _speed_table(a: Analysis) -> Table:
    head = [
        "method",
        "correct / outcomes",
        "geomean speedup vs eager",
        "geomean speedup vs torch.compile",
        "fast_1 (eager)",
        "fast_2 (eager)",
        "S_agg (serving suite)",
        "serving coverage",
    ]
    body = []
    for m in a.speed_methods:
        g = a.speedups[m]
        curve = a.fast_p_eager[m]

        def at(p: float, curve: Any = curve) -> str:
            if curve.values is None:
                return curve.reason
            return fmt(curve.values[curve.ps.index(p)])

        s = a.s_agg[m]
        cover = f"{len(s.covered)} of {len(s.covered) + len(s.missing)} tasks"
        body.append(
            [
                m,
                f"{g.correct}/{g.total}",
                fmt(g.eager),
                fmt(g.compile),
                at(1.0),
                at(2.0),
                fmt(s.value, 3),
                cover,
            ]
        )
    return head, body


def _shape_table(a: Analysis) -> Table:
    """Per task and timed shape: eager, torch.compile and each method's fastest correct kernel (µs)."""
    methods = [m for m in a.speed_methods if m not in {b.label() for b in a.baselines}]
    base = {(b.task_id, b.device, b.label()): b for b in a.baselines}
    head = ["task", "shape", "dtype", "phase", "eager µs", "torch.compile µs", *methods]
    best: dict[tuple[str, str, str, str], dict[str, float]] = {}
    for r in a.rows:
        if not (r.passed and r.perf_measured):
            continue
        for s in r.shapes:
            t = s.get("candidate_us")
            if isinstance(t, int | float) and t > 0:
                key = (r.task_id, r.device, str(s.get("shape")), str(s.get("dtype")))
                per = best.setdefault(key, {})
                per[r.label()] = min(t, per.get(r.label(), float("inf")))
    body = []
    for b in a.baselines:
        if b.method != "eager":
            continue
        comp = base.get((b.task_id, b.device, b.label().replace("eager", "torch.compile")))
        comp_us = (
            {(str(s["shape"]), str(s["dtype"])): s["candidate_us"] for s in comp.shapes}
            if comp
            else {}
        )
        for s in b.shapes:
            key = (b.task_id, b.device, str(s["shape"]), str(s["dtype"]))
            mine = best.get(key, {})
            body.append(
                [
                    b.task_id,
                    str(s["shape"]),
                    str(s["dtype"]),
                    str(s.get("phase") or ""),
                    fmt(s["candidate_us"]),
                    fmt(comp_us.get((str(s["shape"]), str(s["dtype"])))),
                    *[fmt(mine[m]) if m in mine else "no correct kernel" for m in methods],
                ]
            )
    return head, body


def _category_table(a: Analysis) -> Table:
    cats = sorted({c for c, _ in a.table})
    head = ["category", *a.methods]
    body = []
    for c in cats:
        cells = []
        for m in a.methods:
            cell = a.table.get((c, m))
            cells.append(
                "—"
                if cell is None
                else f"{cell.solved}/{cell.total} correct; speedup {fmt(cell.geomean_eager)}"
            )
        body.append([c, *cells])
    return head, body


def _variance_table(a: Analysis) -> Table:
    v = a.variance
    head = ["share of variance in correctness explained by", "eta²"]
    body = [
        ["category", fmt(v.category)],
        ["method", fmt(v.method)],
        ["category x method cells", fmt(v.cells)],
        ["interaction", fmt(v.interaction) if v.balanced else "n/a (unbalanced design)"],
        ["residual (tasks within category, seeds)", fmt(v.residual)],
    ]
    return head, body


def _iteration_table(a: Analysis) -> Table:
    head = [
        "method",
        "iteration",
        "attempts",
        "compile rate",
        "correct share",
        "runs solved so far",
        "best speedup so far (eager)",
    ]
    body = []
    for m, pts in a.iterations.items():
        for p in pts:
            body.append(
                [
                    m,
                    str(p.iteration),
                    str(p.attempts),
                    pct(p.compile_rate),
                    pct(p.correct_rate),
                    pct(p.solved_share),
                    fmt(p.best_speedup),
                ]
            )
    return head, body


def _repair_table(a: Analysis) -> Table:
    head = [
        "method",
        "rescued by repair",
        "correct at first try",
        "revisions of correct kernels",
        "speedup (rescued)",
        "speedup (first try)",
        "rescued / first try",
    ]
    body = [
        [
            m,
            str(r.rescued),
            str(r.first_try),
            str(r.descended),
            fmt(r.rescued_speedup),
            fmt(r.first_try_speedup),
            fmt(r.ratio),
        ]
        for m, r in a.repair.items()
    ]
    return head, body


def _portability_table(a: Analysis) -> Table:
    p = a.portability
    if p.reason:
        return ["portability"], [[p.reason]]
    head = ["task", "method", *p.devices, "max/min"]
    body = [
        [e.task_id, e.method, *[fmt(e.speedups.get(d)) for d in p.devices], fmt(e.ratio)]
        for e in p.entries
    ]
    body += [
        ["all tasks (geomean)", m, *["" for _ in p.devices], fmt(v)] for m, v in p.by_method.items()
    ]
    return head, body


def _feature_table(a: Analysis) -> Table:
    head = ["method", "correct kernels with PTX", "without PTX", *FEATURES]
    body = [
        [
            m,
            str(f.kernels),
            str(f.without_ptx),
            *[pct(v) if is_measured(v) else str(v) for v in f.shares.values()],
        ]
        for m, f in a.features.items()
    ]
    return head, body


def _rows_table(a: Analysis) -> Table:
    head = [
        "task",
        "category",
        "method",
        "scripted",
        "model",
        "seed",
        "attempt",
        "iteration",
        "parent",
        "device",
        "passed",
        "stage reached",
        "error",
        "speedup eager",
        "speedup compile",
        "S",
        "flags",
        "origin",
    ]
    body = []
    for r in sorted(a.rows, key=lambda r: (r.task_id, r.scripted, r.method, r.seed, r.attempt)):
        untimed = NOT_MEASURED if not r.perf_measured else "—"
        body.append(
            [
                r.task_id,
                r.category,
                r.label(),
                "scripted" if r.scripted else "",
                r.model,
                str(r.seed),
                str(r.attempt),
                fmt(r.iteration),
                fmt(r.parent_attempt),
                r.device,
                "yes" if r.passed else "no",
                r.stage_reached or "nothing",
                r.error_class,
                fmt(r.geomean_speedup_eager) if r.geomean_speedup_eager is not None else untimed,
                fmt(r.geomean_speedup_compile)
                if r.geomean_speedup_compile is not None
                else untimed,
                fmt(r.score, 3) if r.score is not None else untimed,
                ", ".join(r.flags),
                r.origin or r.run_id,
            ]
        )
    return head, body


SECTIONS: list[tuple[str, str, str, list[str]]] = [
    (
        "stages",
        "Stage pass rates",
        "Share of run outcomes (the best attempt of each task x method x seed x device) that passed each stage of the judge.",
        ["stage_pass_rates"],
    ),
    (
        "speed",
        "Speed",
        "Geometric mean speedups are over the correct outcomes; fast_p is the share of all outcomes that are correct and faster "
        "than the baseline by more than p (KernelBench); S_agg = Σ w_i S_i / Σ w_i over the serving-suite tasks present, with S_i "
        "the median roofline attainment over shapes (0 when incorrect) and w_i the serving weights of benchmarks/weights.py.",
        ["fast_p_eager", "fast_p_compile"],
    ),
    (
        "shapes",
        "Per shape",
        "Microseconds per call on each timed shape: the reference under eager and torch.compile (median over the verdicts "
        "that timed it) and the fastest correct kernel of each method.",
        [],
    ),
    (
        "categories",
        "Category x method",
        "Correct outcomes over outcomes, and the geomean speedup over eager of the correct ones.",
        ["category_method"],
    ),
    (
        "variance",
        "What explains correctness",
        "eta² = SS_between / SS_total of the pass indicator (1 correct, 0 not) over run outcomes, for each factor.",
        [],
    ),
    (
        "iterations",
        "Iteration curves",
        "Per evaluator round: share of that round's attempts that compile and that are correct; share of runs with a correct "
        "kernel so far; geomean over solved runs of the best speedup so far.",
        [
            "iteration_compile_rate",
            "iteration_correct_rate",
            "iteration_solved_share",
            "iteration_best_speedup",
        ],
    ),
    (
        "repair",
        "Repair bias",
        "Correct attempts with a failed ancestor (rescued by repair) against correct attempts with no parent (first try): "
        "geomean speedup over eager of each, and their ratio (below 1: rescued kernels are slower).",
        [],
    ),
    (
        "portability",
        "Portability",
        "Best correct speedup over eager per GPU, and max/min across GPUs (1.0 = as good everywhere).",
        ["portability"],
    ),
    (
        "features",
        "Hardware features (compiled PTX)",
        "Share of correct kernels whose PTX uses wgmma, TMA (cp.async.bulk.tensor), bulk copies, mma.sync, cp.async, 128-bit loads.",
        ["hardware_features"],
    ),
    ("rows", "Every row", "One row per judged kernel.", []),
]
PLOT_NAMES = {name for *_, names in SECTIONS for name in names}
TABLES = {
    "stages": _stage_table,
    "speed": _speed_table,
    "shapes": _shape_table,
    "categories": _category_table,
    "variance": _variance_table,
    "iterations": _iteration_table,
    "repair": _repair_table,
    "portability": _portability_table,
    "features": _feature_table,
    "rows": _rows_table,
}


# --------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, -apple-system, Segoe UI, Roboto, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: .2em; }
table { border-collapse: collapse; margin: .8em 0; font-size: .85em; }
th, td { border: 1px solid #ccc; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
.note { background: #fff6dd; border-left: 4px solid #e0a800; padding: .5em 1em; }
.plots img { margin: .5em 1em .5em 0; max-width: 100%; height: auto; }
.scripted { color: #a05a00; font-weight: 600; }
dl { display: grid; grid-template-columns: max-content auto; gap: .2em 1em; } dt { font-weight: 600; }
"""


def _html_cell(text: str) -> str:
    escaped = html.escape(text)
    return escaped.replace("[scripted]", '<span class="scripted">[scripted]</span>')


def _html_table(table: Table) -> str:
    head, body = table
    rows = "".join(
        "<tr>" + "".join(f"<td>{_html_cell(c)}</td>" for c in row) + "</tr>" for row in body
    )
    return f"<table><thead><tr>{''.join(f'<th>{html.escape(h)}</th>' for h in head)}</tr></thead><tbody>{rows}</tbody></table>"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(table: Table) -> str:
    head, body = table
    lines = ["| " + " | ".join(_md_cell(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


def render_html(a: Analysis, plots: dict[str, str], sources: list[str], title: str) -> str:
    parts = [
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"
    ]
    if any(r.scripted for r in a.rows):
        parts.append(f'<p class="note">{html.escape(SCRIPTED_NOTE)}</p>')
    parts.append(
        "<dl>"
        + "".join(
            f"<dt>{html.escape(k)}</dt><dd>{_html_cell(v)}</dd>" for k, v in _provenance(a, sources)
        )
        + "</dl>"
    )
    for key, heading, text, plot_names in SECTIONS:
        parts.append(f'<h2 id="{key}">{html.escape(heading)}</h2><p>{html.escape(text)}</p>')
        if key == "variance" and a.variance.note:
            parts.append(f"<p>{html.escape(a.variance.note)} (n = {a.variance.n})</p>")
        imgs = []
        for name in plot_names:
            if name in plots:
                data = base64.b64encode(plots[name].encode()).decode()
                imgs.append(
                    f'<img alt="{html.escape(name)}" src="data:image/svg+xml;base64,{data}">'
                )
        if imgs:
            parts.append('<div class="plots">' + "".join(imgs) + "</div>")
        parts.append(_html_table(TABLES[key](a)))
    parts.append("</body></html>")
    return "\n".join(parts)


def render_markdown(a: Analysis, plot_files: dict[str, str], sources: list[str], title: str) -> str:
    out = [f"# {title}", ""]
    if any(r.scripted for r in a.rows):
        out += [f"> **{SCRIPTED_NOTE}**", ""]
    out += [f"- **{k}**: {v}" for k, v in _provenance(a, sources)] + [""]
    for key, heading, text, plot_names in SECTIONS:
        out += [f"## {heading}", "", text, ""]
        if key == "variance" and a.variance.note:
            out += [f"{a.variance.note} (n = {a.variance.n})", ""]
        for name in plot_names:
            if name in plot_files:
                out += [f"![{name}]({plot_files[name]})", ""]
        out += [_md_table(TABLES[key](a)), ""]
    return "\n".join(out)


def write_report(
    rows: list[ResultRow],
    out_dir: str | Path,
    sources: list[str] | None = None,
    title: str = "kernforge report",
    weights: dict[str, float] | None = None,
) -> ReportFiles:
    """Analyse `rows` and write report.html, report.md and plots/*.svg into `out_dir`."""
    out_dir = Path(out_dir)
    (out_dir / "plots").mkdir(parents=True, exist_ok=True)
    sources = sources or []
    a = analyze(rows, weights)
    plots = _make_plots(a).svgs
    for name in PLOT_NAMES - set(
        plots
    ):  # a plot of an earlier report that this one has no data for
        (out_dir / "plots" / f"{name}.svg").unlink(missing_ok=True)
    files = {}
    for name, svg in plots.items():
        path = out_dir / "plots" / f"{name}.svg"
        path.write_text(svg, encoding="utf-8")
        files[name] = f"plots/{name}.svg"
    html_path, md_path = out_dir / "report.html", out_dir / "report.md"
    html_path.write_text(render_html(a, plots, sources, title), encoding="utf-8")
    md_path.write_text(render_markdown(a, files, sources, title), encoding="utf-8")
    return ReportFiles(html_path, md_path, [out_dir / f for f in files.values()])
