"""The one rule for a misspelt name: `unknown_name` says what was not found and the closest
known names (stdlib `difflib`), in one line.

    unknown task 'softmx_fp32'; did you mean 'softmax_fp32'?

Every place that looks a name up (task ids, suites, methods, settings, run ids, knowledge-base
ids and kinds) words its miss with it, so a typo gets the same answer from every command.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

CUTOFF = 0.6  # difflib's own default: below it a "suggestion" is a guess
MOST = 3  # at most this many suggestions
NEAR = 0.05  # ... and only those within this similarity of the best one
LISTED = 12  # a set of names this small is listed whole when nothing is close


def close_names(given: str, known: Iterable[str]) -> list[str]:
    """The known names closest to `given` (case-insensitive), best first: the best match and
    any that are nearly as close (softmax -> softmax_fp32, softmax_fp16, softmax_bf16)."""
    names = list(dict.fromkeys(known))
    by_lower = {n.lower(): n for n in names}
    target = given.lower()
    matches = difflib.get_close_matches(target, list(by_lower), n=MOST, cutoff=CUTOFF)
    if not matches:
        return []
    best = difflib.SequenceMatcher(None, target, matches[0]).ratio()
    return [
        by_lower[m]
        for m in matches
        if difflib.SequenceMatcher(None, target, m).ratio() >= best - NEAR
    ]


def unknown_name(kind: str, given: str, known: Iterable[str], hint: str = "") -> str:
    """One line: "unknown <kind> '<given>'", then the close names ("did you mean ...?"). A
    handful of names is also listed whole; with nothing close, `hint` (where to find the
    names) is said instead of the list."""
    names = list(dict.fromkeys(known))
    line = f"unknown {kind} {given!r}"
    listed = f"expected one of {', '.join(names)}" if 0 < len(names) <= LISTED else ""
    close = close_names(given, names)
    if close:
        quoted = [repr(c) for c in close]
        alternatives = (
            quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
        )
        return f"{line}; did you mean {alternatives}?" + (f" ({listed})" if listed else "")
    if hint or listed:
        return f"{line}; {hint or listed}"
    return line
