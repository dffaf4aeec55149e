"""Requests to a chroma server under a total deadline.

chromadb's HTTP client waits for a server without limit (its httpx session has no timeout), so a
server that accepts connections and never answers would hold a run for ever. `call_within`
runs one request in a daemon thread and waits for it at most its deadline; past that it raises
(`KBTimeout`) and the request is left behind, blocked: chromadb offers no way to abort it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

KB_REQUEST_TIMEOUT_S = 30.0  # one request to a chroma server, in total; the kb.timeout default

T = TypeVar("T")


class KBTimeout(TimeoutError):
    """A chroma server did not answer a request within its deadline."""


def call_within(seconds: float, call: Callable[[], T], stalled: Callable[[], Exception]) -> T:
    """`call()`'s result if it comes within `seconds`, else the error `stalled()` makes; the
    call itself runs on in a daemon thread (nothing can interrupt it)."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the caller below
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="kb-request", daemon=True).start()
    if not done.wait(seconds):
        raise stalled()
    if "error" in box:
        raise box["error"]
    return box["value"]
