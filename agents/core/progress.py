"""Progress for people: one coloured line per attempt and per round, and a final summary.

Machines read events.jsonl; this is the human view of the same facts: the round, the best
kernel's speed-up and roofline attainment (or "not measured"), tokens and cost, GPU time.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

from agents.core.llm.budget import BudgetTracker
from agents.core.state import Attempt


def speed_text(attempt: Attempt | None) -> str:
    """ "1.42x eager, attainment 0.63" or "speed not measured"."""
    if attempt is None:
        return "no correct kernel yet"
    v = attempt.verdict
    parts = []
    if v.geomean_speedup_eager is not None:
        parts.append(f"{v.geomean_speedup_eager:.2f}x eager")
    if v.geomean_speedup_compile is not None:
        parts.append(f"{v.geomean_speedup_compile:.2f}x compile")
    if v.score is not None:
        parts.append(f"attainment {v.score:.2f}")
    return ", ".join(parts) if parts else f"speed {v.perf_status}"


def spend_text(tracker: BudgetTracker) -> str:
    snap = tracker.snapshot()["used"]
    if snap["calls"] == 0:
        llm = "no LLM calls"
    else:
        tokens = snap["tokens"]
        tok = f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)
        cost = f"${snap['cost_usd']:.3f}" + ("+" if snap["cost_is_lower_bound"] else "")
        scripted = " (scripted)" if snap["scripted_calls"] == snap["calls"] else ""
        llm = f"{snap['calls']} LLM calls, {tok} tokens{scripted}, {cost}"
    return f"{llm}; GPU {snap['gpu_s']:.0f} s; wall {snap['wall_s']:.0f} s"


class Progress:
    """Prints to a rich console; `quiet` prints nothing (events are still written). Steps
    that take a while (`step`) are announced on `steps`, stderr by default."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        quiet: bool = False,
        steps: Console | None = None,
    ) -> None:
        self.console = console or Console()
        self.steps = steps or Console(stderr=True)
        self.quiet = quiet

    def _print(self, text: str) -> None:
        if not self.quiet:
            self.console.print(text, highlight=False)

    def note(self, text: str, style: str = "dim") -> None:
        self._print(f"[{style}]{escape(text)}[/]")

    def step(self, text: str) -> None:
        """One line as a step that may take seconds starts (a search, a judge call), so a
        terminal or a log shows what the run is waiting for; never wrapped."""
        if not self.quiet:
            self.steps.print(f"[dim]{escape(text)}[/]", highlight=False, soft_wrap=True)

    def start(
        self, run_id: str, task_id: str, device: str, llm: str, method: str, run_path: str
    ) -> None:
        self._print(
            f"[bold]kernforge run[/] {escape(run_id)}: task [bold]{escape(task_id)}[/] on {device}, "
            f"llm {escape(llm)}, method {escape(method)}"
        )
        self._print(f"[dim]run directory: {escape(run_path)}[/]")

    def attempt(self, attempt: Attempt) -> None:
        v = attempt.verdict
        parent = f", parent {attempt.parent_id}" if attempt.parent_id is not None else ""
        origin = f", {attempt.provenance.label}" if attempt.provenance is not None else ""
        head = f"  attempt {attempt.id} ({attempt.node}/{attempt.mode}{parent}{escape(origin)}): "
        if v.passed:
            line = f"[green]PASS[/] {escape(speed_text(attempt))}"
        else:
            line = f"[red]FAIL {escape(v.error_class)}[/] [dim]{escape(v.message[:140])}[/]"
        m = attempt.measurement
        if m is not None:
            if m.measured:
                label = " (scripted)" if m.scripted else ""
                verdict = "[green]accepted[/]" if attempt.accepted else "[yellow]rejected[/]"
                line += f"; re-measured {m.gain:+.1%} vs noise {m.noise:.1%}{label}: {verdict}"
                if m.why:
                    line += f" [dim]({escape(m.why)})[/]"
            else:
                line += f"; [dim]{escape(m.reason)}[/]"
        elif attempt.accepted:
            line += "; [green]incumbent[/]"
        self._print(head + line)

    def round(
        self, iteration: int, max_iterations: int, best: Attempt | None, tracker: BudgetTracker
    ) -> None:
        best_text = (
            f"best attempt {best.id}: {speed_text(best)}" if best else "no correct kernel yet"
        )
        self._print(
            f"[bold cyan]round {iteration}/{max_iterations}[/] {escape(best_text)} | {escape(spend_text(tracker))}"
        )

    def final(self, summary: dict[str, Any]) -> None:
        self._print("")
        self._print(f"[bold]finished[/]: {escape(summary['finish_reason'])}")
        if summary.get("best_kernel"):
            self._print(
                f"[bold green]best kernel[/]: {escape(summary['best_kernel'])} (attempt {summary['best_attempt']}; "
                f"{escape(summary['speed'])})"
            )
            if summary.get("came_from"):
                self._print(f"  where it came from: {escape(summary['came_from'])}")
        else:
            self._print(
                "[bold red]no correct kernel[/] was found; attempts and verdicts are in the run directory"
            )
        self._print(
            f"{summary['attempts']} attempts, {summary['pairs']} error->fix pairs; {escape(summary['spend'])}"
        )
        self._print(f"[dim]run directory: {escape(summary['run_dir'])}[/]")
