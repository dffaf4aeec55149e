"""The record of an unexpected error: its full trace appended to a log file, its one line for
the person at the terminal. The run's `_owned` block (agents/api.py) and the CLI's top-level
handler (agents/cli/main.py) use both; the API's errors (agents/api_tools.py) the one line."""

from __future__ import annotations

import traceback
from datetime import UTC, datetime
from pathlib import Path

from agents.core.redact import scrub

ERROR_LOG = "error.log"


def one_line(exc: BaseException) -> str:
    """`Type: first line of the message` (the type alone when the message is empty)."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def append_trace(path: Path, exc: BaseException, context: str = "") -> Path:
    """Append `exc`'s full trace, with the time and `context`, to the log `path` (scrubbed of
    the secrets this process knows); returns `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    trace = "".join(traceback.format_exception(exc))
    with path.open("a", encoding="utf-8") as f:
        f.write(scrub(f"--- {stamp} {context}\n{trace}\n"))
    return path
