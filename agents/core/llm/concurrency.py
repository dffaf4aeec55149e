"""A small rate limiter for parallel LLM calls: at most N in flight, at most R started per minute.

The generator node asks for several candidates at once, each from its own thread. Share one
`RateLimiter` between them (or hand it to the provider, which then holds it around each HTTP
request, retries included, but not while waiting between retries):

    limiter = RateLimiter(max_concurrent=4, requests_per_minute=50)
    with limiter:
        completion = provider.complete(messages)

The per-minute limit is a sliding window over the start times of the last `period_s` seconds:
a request starts only when fewer than `requests_per_minute` started within that window.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from types import TracebackType


class RateLimiter:
    """Caps concurrency and request rate across threads. Usable as a context manager."""

    def __init__(
        self,
        max_concurrent: int = 4,
        requests_per_minute: int | None = None,
        *,
        period_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`period_s` is the window `requests_per_minute` counts over (tests shorten it)."""
        if max_concurrent < 1:
            raise ValueError(f"max_concurrent must be >= 1, got {max_concurrent}")
        if requests_per_minute is not None and requests_per_minute < 1:
            raise ValueError(f"requests_per_minute must be >= 1 or None, got {requests_per_minute}")
        if period_s <= 0:
            raise ValueError(f"period_s must be > 0, got {period_s}")
        self.max_concurrent = max_concurrent
        self.requests_per_minute = requests_per_minute
        self.period_s = period_s
        self._clock = clock
        self._slots = threading.BoundedSemaphore(max_concurrent)
        self._starts: deque[float] = deque()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Block until a slot is free and the rate allows another request to start."""
        self._slots.acquire()
        try:
            self._wait_for_rate()
        except BaseException:
            self._slots.release()
            raise

    def release(self) -> None:
        self._slots.release()

    def _wait_for_rate(self) -> None:
        if self.requests_per_minute is None:
            return
        per_window = self.requests_per_minute
        while True:
            with self._lock:
                now = self._clock()
                while self._starts and now - self._starts[0] >= self.period_s:
                    self._starts.popleft()
                if len(self._starts) < per_window:
                    self._starts.append(now)
                    return
                pause = self.period_s - (now - self._starts[0])
            time.sleep(max(pause, 0.001))

    def __enter__(self) -> RateLimiter:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
