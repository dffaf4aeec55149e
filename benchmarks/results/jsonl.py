"""Append-only JSON Lines files (events, pairs, result rows): written so a crash tears at most
the last line, and read so a torn or damaged line is skipped with a warning naming it.

A process killed in the middle of `append_line` can leave a last line without its newline.
The next `append_line` ends that line first, so the new record starts on a line of its own
instead of being glued onto the torn one; `read_jsonl` then skips the torn line, saying
`<file>:<line>` and why, and returns every other record.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def append_line(path: Path, line: str) -> None:
    """Append `line` (one JSON document, no newline) to `path` and sync it to disk. A last
    line left without its newline by a crash is ended first, so `line` stands alone."""
    with Path(path).open("a+b") as f:  # writes go to the end whatever the position
        size = f.seek(0, os.SEEK_END)
        if size:
            f.seek(size - 1)
            if f.read(1) != b"\n":
                f.write(b"\n")
        f.write(line.encode("utf-8") + b"\n")
        f.flush()
        os.fsync(f.fileno())


def read_jsonl(path: Path) -> tuple[list[tuple[int, Any]], list[str]]:
    """(line number, parsed JSON) for each readable line of `path`, and one warning per line
    skipped: a torn last line (no newline: cut short by a crash) or a line that is not JSON.
    Blank lines are ignored. A missing file has no lines."""
    path = Path(path)
    if not path.is_file():
        return [], []
    data = path.read_bytes()
    lines = data.split(b"\n")
    torn = bool(lines) and lines[-1] != b""  # the file does not end with a newline
    records: list[tuple[int, Any]] = []
    warnings: list[str] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            records.append((number, json.loads(raw.decode("utf-8"))))
        except UnicodeDecodeError:
            warnings.append(f"{path}:{number}: not UTF-8 text, line skipped")
        except json.JSONDecodeError as exc:
            if torn and number == len(lines):
                warnings.append(
                    f"{path}:{number}: torn last line skipped (cut short by a crash; "
                    "the next line written starts on a fresh line)"
                )
            else:
                warnings.append(f"{path}:{number}: not JSON ({exc.msg}), line skipped")
    return records, warnings
