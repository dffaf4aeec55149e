"""Consoles for the CLI that read well on a terminal and in a log.

On a terminal rich wraps to the window as usual. Piped into a file, a log or another program
(stdout or stderr not a TTY) nothing is broken at 80 columns: text is printed as one line
(soft wrap) and a table takes the width its cells need, so ids and errors stay whole. The check
is made at each print, so a console made at import time follows where its stream goes later
(a test's captured output, a redirect).
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console, ConsoleDimensions
from rich.markup import escape

# a table in a log is as wide as its widest row; this only bounds rich's layout arithmetic
LOG_WIDTH = 10_000


class LogConsole(Console):
    """A rich Console that wraps only on a terminal (see the module doc)."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        return size if self.is_terminal else ConsoleDimensions(LOG_WIDTH, size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

    @property
    def soft_wrap(self) -> bool:
        return self._soft_wrap or not self.is_terminal

    @soft_wrap.setter
    def soft_wrap(self, value: bool) -> None:
        self._soft_wrap = value


def make_console(stderr: bool = False) -> LogConsole:
    """The console a CLI module prints with: stdout, or stderr for errors and progress."""
    return LogConsole(stderr=stderr)


console = make_console()
err_console = make_console(stderr=True)


def step(text: str, quiet: bool = False) -> None:
    """One progress line on stderr for a step that takes a while ("kb: embedding 128/410
    chunks"); stdout stays for results (and for `--json`, one JSON document)."""
    if not quiet:
        err_console.print(f"[dim]{escape(text)}[/]", highlight=False)


def print_json(data: Any) -> None:
    """`data` as one JSON document on stdout (what `--json` prints)."""
    print(json.dumps(data, indent=2, default=str))
