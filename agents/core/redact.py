"""The agent's secrets, kept out of everything a run writes and every prompt it sends.

The secrets are the environment's (the rule of `benchmarks.redaction`: variables named *_KEY,
*_TOKEN, *_SECRET, *_PASSWORD) plus the keys model providers were configured with
(`register_secret`, called by a provider given `api_key=`). `scrub` replaces each one in a text
with ``[redacted NAME]``; the run directory (agents/core/rundir.py) scrubs every file it writes and
the evaluator scrubs each verdict before it enters the graph's state, its checkpoint or a prompt.
"""

from __future__ import annotations

import threading
from typing import Any, TypeVar

from benchmarks import redact, redact_data, redact_verdict, secret_values

V = TypeVar("V")

_configured: dict[str, str] = {}
_lock = threading.Lock()


def register_secret(name: str, value: str | None) -> None:
    """Remember a secret the environment does not hold (a provider's configured `api_key`)."""
    if value:
        with _lock:
            _configured[name] = value


def run_secrets() -> dict[str, str]:
    """Name -> value of every secret this process knows: the environment's and the configured."""
    with _lock:
        configured = dict(_configured)
    known = secret_values()
    for name, value in configured.items():
        # a provider's key never hides the environment's value of the same name (or vice versa)
        if known.get(name, value) != value:
            name = f"{name} (configured)"
        known[name] = value
    return known


def scrub(text: str) -> str:
    """`text` with every known secret replaced by ``[redacted NAME]``."""
    return redact(text, run_secrets())


def scrub_data(data: V) -> V:
    """JSON-like `data` with every string scrubbed."""
    return redact_data(data, run_secrets())


def scrub_verdict(verdict: Any) -> Any:
    """A judge's Verdict with every known secret scrubbed from its text."""
    return redact_verdict(verdict, run_secrets())
