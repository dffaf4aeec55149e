"""Printing a verdict for people (rich) — the JSON form is `Verdict.model_dump_json()`."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from benchmarks import Verdict


def _fmt(value: float | None, spec: str = ".3g", suffix: str = "") -> str:
    return "—" if value is None else f"{value:{spec}}{suffix}"


def print_verdict(verdict: Verdict, console: Console | None = None) -> None:
    console = console or Console()
    colour = "green" if verdict.passed else "red"
    head = "PASS" if verdict.passed else f"FAIL: {verdict.error_class.value}"
    if verdict.passed and verdict.skipped:
        head = "PASS (with checks skipped)"
    reached = verdict.stage_reached.value if verdict.stage_reached else "nothing"
    console.print(
        f"[bold {colour}]{head}[/]  task [bold]{verdict.task_id}[/] on {verdict.device}; stage reached: [bold]{reached}[/]"
    )
    if verdict.message:
        console.print(f"  {escape(verdict.message)}")
    for note in verdict.skipped:
        console.print(f"  [yellow]skipped:[/] {escape(note)}")
    for note in verdict.notes:
        console.print(f"  [cyan]note:[/] {escape(note)}")
    if verdict.fallback_ops:
        console.print(f"  [red]PyTorch compute ops:[/] {', '.join(verdict.fallback_ops)}")
    if verdict.triton_launches:
        launches = ", ".join(f"{k} x{v}" for k, v in verdict.triton_launches.items())
        console.print(f"  Triton launches: {launches}")
    if verdict.shapes:
        timed = any(s.candidate_us is not None for s in verdict.shapes)
        cols = ["shape", "phase", "max abs err", "max rel err"]
        if timed:
            cols += [
                "time µs",
                "eager µs",
                "compile µs",
                "× eager",
                "× compile",
                "roofline µs",
                "attain.",
                "IOU",
                "MFU",
            ]
        table = Table(show_header=True, header_style="bold")
        for col in cols:
            table.add_column(col, justify="right" if col not in ("shape", "phase") else "left")
        for s in verdict.shapes:
            row = [s.shape, s.phase, _fmt(s.max_abs_err), _fmt(s.max_rel_err)]
            if not timed:
                table.add_row(*row)
                continue
            table.add_row(
                *row,
                _fmt(s.candidate_us, ".1f"),
                _fmt(s.eager_us, ".1f"),
                _fmt(s.compile_us, ".1f"),
                _fmt(s.speedup_eager, ".2f"),
                _fmt(s.speedup_compile, ".2f"),
                _fmt(s.roofline_us, ".2f"),
                _fmt(s.attainment, ".2f"),
                _fmt(s.iou, ".2f"),
                _fmt(s.mfu, ".2f"),
            )
        console.print(table)
    console.print(f"  performance: {escape(verdict.perf_status)}")
    if verdict.geomean_speedup_eager is not None:
        console.print(
            f"  geomean speedup: {_fmt(verdict.geomean_speedup_eager, '.2f')}× eager, "
            f"{_fmt(verdict.geomean_speedup_compile, '.2f')}× torch.compile; S (median attainment) {_fmt(verdict.score, '.2f')}"
        )
    if verdict.flags:
        console.print(f"  flags: {', '.join(verdict.flags)}")
    timing = ", ".join(f"{k} {v:.2f}s" for k, v in verdict.stage_seconds.items())
    console.print(f"  [dim]harness time: {timing}[/]")
