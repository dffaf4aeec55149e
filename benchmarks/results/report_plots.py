"""The report's figures: matplotlib, each written as SVG (embedded in the HTML page) and PNG
(linked from the Markdown summary), kept by name.

One colour per method in every figure. Line plots give each series its own line style and
marker, draw earlier series wider underneath later ones, and name in the legend a series that
coincides with an earlier one ("same as ..."), so identical series stay visible.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

from benchmarks.harness.ptx import FEATURES
from benchmarks.results.analysis import PASS_STAGES, STAGE_TITLES, Analysis, is_measured

PLOT_NAMES = (
    "stage_pass_rates",
    "fast_p_eager",
    "fast_p_compile",
    "category_method",
    "iteration_compile_rate",
    "iteration_correct_rate",
    "iteration_solved_share",
    "iteration_best_speedup",
    "throughput",
    "portability",
    "hardware_features",
)
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
PNG_DPI = 150


@dataclass
class Figure:
    svg: str  # text, no DOCTYPE (the page names no URL)
    png: bytes


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


class Plots:
    """matplotlib figures rendered to SVG and PNG, kept by name (one of PLOT_NAMES)."""

    def __init__(self, methods: list[str]) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator

        self.plt = plt
        self.locator = MaxNLocator
        plt.rcParams.update({"svg.hashsalt": "kernforge", "svg.fonttype": "path", "font.size": 9})
        palette = plt.get_cmap("tab10").colors
        self.colors = {m: palette[i % len(palette)] for i, m in enumerate(methods)}
        self.figures: dict[str, Figure] = {}

    def legend(self, ax: Any) -> None:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)

    def save(self, name: str, fig: Any) -> None:
        if name not in PLOT_NAMES:
            raise ValueError(f"plot {name!r} is not one of PLOT_NAMES")
        svg = io.StringIO()
        fig.savefig(
            svg,
            format="svg",
            bbox_inches="tight",
            metadata={"Creator": None, "Date": None, "Format": None, "Type": None},
        )
        png = io.BytesIO()
        fig.savefig(
            png, format="png", dpi=PNG_DPI, bbox_inches="tight", metadata={"Software": None}
        )
        self.plt.close(fig)
        # the DOCTYPE names a DTD by URL; nothing fetches it, but the page should name no URL at all
        text = re.sub(r"<!DOCTYPE[^>]*>\s*", "", svg.getvalue(), count=1)
        self.figures[name] = Figure(text, png.getvalue())

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
        legend: dict[str, str] | None = None,
    ) -> None:
        """One line per series; a series equal to an earlier one is drawn in another style on
        top of it and its legend entry says which it coincides with."""
        fig, ax = self.plt.subplots(figsize=(5.5, 3.2))
        n = len(curves)
        drawn: list[tuple[str, tuple[list[float], list[float]]]] = []
        for i, (label, (xs, ys)) in enumerate(curves.items()):
            same = [other for other, data in drawn if data == (list(xs), list(ys))]
            text = (legend or {}).get(label, label)
            if same:
                text += f" (same as {same[0]})"
            step = max(1, len(xs) // 8)
            ax.plot(
                xs,
                ys,
                linestyle=LINE_STYLES[i % len(LINE_STYLES)],
                marker=MARKERS[i % len(MARKERS)],
                markevery=(i % step, step) if len(xs) > 12 else None,
                markersize=7 - 4 * i / max(n - 1, 1),
                markerfacecolor="none" if i % 2 else None,
                linewidth=3.0 - 2.0 * i / max(n - 1, 1),
                label=text,
                color=self.colors.get(label),
                drawstyle="steps-post" if steps else "default",
                zorder=2 + i,
            )
            drawn.append((label, (list(xs), list(ys))))
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
                        _pct(data[i, j]),
                        ha="center",
                        va="center",
                        color="white" if data[i, j] < 0.6 else "black",
                        fontsize=7,
                    )
        fig.colorbar(im, ax=ax, label="correct share")
        ax.set_title(title)
        self.save(name, fig)


def make_plots(a: Analysis) -> dict[str, Figure]:
    """Every figure the analysis has data for, by name."""
    plots = Plots(a.speed_methods)
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
                "Best speedup over eager so far (geomean over all runs, floor 1.0)",
                speed,
                "iteration",
                "speedup",
                ylim=None,
                integer_x=True,
                steps=True,
            )
    timed = {m: t for m, t in a.throughput.items() if t.minutes > 0}
    if timed:
        plots.lines(
            "throughput",
            "Candidates judged over run time",
            {m: (t.minutes_at, [float(y) for y in t.judged_at]) for m, t in timed.items()},
            "minutes of the method's runs (laid end to end)",
            "candidates judged",
            ylim=None,
            steps=True,
            legend={m: f"{m}: {t.per_minute:.2f}/min" for m, t in timed.items()},
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
    return plots.figures
