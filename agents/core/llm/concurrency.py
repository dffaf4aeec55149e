"""Per-provider limits for parallel LLM calls: at most N in flight, R requests and T tokens per
minute, and one shared pause when the server says "slow down".

The generator node asks for several candidates at once, each from its own thread, and a bench
may run several runs in one process. Every call to the same provider (same spec: kind, server
and model) goes through one `RateLimiter` (`shared_limiter`); the provider holds a slot around
each HTTP request, retries included, but not while waiting between retries:

    limiter = shared_limiter("openai:gpt-4o", concurrency=4, rpm=500, tpm=200_000)
    with limiter.slot(tokens=estimate) as ticket:     # waits for a slot and the two windows
        reply = send(request)
        ticket.settle(reply_tokens)                   # the window keeps what was really used

Both windows slide over the last `period_s` seconds (60). A request starts when fewer than
`rpm` requests started in the window and its token estimate (the prompt's estimate plus the
reply's `max_tokens`: its worst case) fits under `tpm` with what the window already holds; a
single request larger than `tpm` alone still starts when the window is empty, so it is slowed
down but never refused. `settle` replaces the estimate by the server's count once it is known.
A 429 with a `retry-after` hint pauses every caller of the limiter (`back_off`), not only the
one that got it; each call's own retries (agents/core/llm/retry.py) honour the same hint.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType


@dataclass
class _Start:
    at: float
    tokens: int


class Ticket:
    """One admitted request: `settle` corrects the tokens it holds in the window."""

    def __init__(self, limiter: RateLimiter, start: _Start) -> None:
        self._limiter = limiter
        self._start = start

    @property
    def tokens(self) -> int:
        return self._start.tokens

    def settle(self, tokens: int | None) -> None:
        """The tokens the request really used (prompt plus reply); None keeps the estimate."""
        if tokens is not None and tokens >= 0:
            with self._limiter._lock:
                self._start.tokens = int(tokens)


class RateLimiter:
    """Caps concurrency, request rate and token rate across threads."""

    def __init__(
        self,
        max_concurrent: int = 4,
        requests_per_minute: int | None = None,
        tokens_per_minute: int | None = None,
        *,
        period_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """`period_s` is the window both per-minute limits count over (tests shorten it)."""
        if max_concurrent < 1:
            raise ValueError(f"max_concurrent must be >= 1, got {max_concurrent}")
        for name, value in (
            ("requests_per_minute", requests_per_minute),
            ("tokens_per_minute", tokens_per_minute),
        ):
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1 or None, got {value}")
        if period_s <= 0:
            raise ValueError(f"period_s must be > 0, got {period_s}")
        self.max_concurrent = max_concurrent
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self.period_s = period_s
        self._clock = clock
        self._sleep = sleep
        self._slots = threading.BoundedSemaphore(max_concurrent)
        self._starts: deque[_Start] = deque()
        self._paused_until = 0.0
        self._lock = threading.Lock()
        self.waited_s = 0.0  # total time callers spent waiting for the rate windows or a pause

    @contextmanager
    def slot(self, tokens: int = 0) -> Iterator[Ticket]:
        """Hold one slot for a request estimated at `tokens`, waiting for the windows first."""
        self._slots.acquire()
        try:
            ticket = self._admit(max(int(tokens), 0))
            yield ticket
        finally:
            self._slots.release()

    def back_off(self, seconds: float) -> None:
        """Start no request for `seconds` (a server's retry-after hint), whoever asks."""
        if seconds > 0:
            with self._lock:
                self._paused_until = max(self._paused_until, self._clock() + seconds)

    def window(self) -> tuple[int, int]:
        """Requests started and tokens held in the current window."""
        with self._lock:
            self._expire(self._clock())
            return len(self._starts), sum(s.tokens for s in self._starts)

    def _expire(self, now: float) -> None:
        while self._starts and now - self._starts[0].at >= self.period_s:
            self._starts.popleft()

    def _admit(self, tokens: int) -> Ticket:
        began = self._clock()
        while True:
            with self._lock:
                now = self._clock()
                self._expire(now)
                pause = self._paused_until - now
                if pause <= 0:
                    pause = self._rate_wait(now, tokens)
                if pause <= 0:
                    start = _Start(now, tokens)
                    self._starts.append(start)
                    self.waited_s += now - began
                    return Ticket(self, start)
            self._sleep(max(pause, 0.001))

    def _rate_wait(self, now: float, tokens: int) -> float:
        """Seconds until the windows admit a request of `tokens`; <= 0 when they do now."""
        waits = [0.0]
        if self.requests_per_minute is not None and len(self._starts) >= self.requests_per_minute:
            waits.append(self.period_s - (now - self._starts[-self.requests_per_minute].at))
        if self.tokens_per_minute is not None and self._starts:
            held = sum(s.tokens for s in self._starts)
            if held + tokens > self.tokens_per_minute:
                # wait until enough of the oldest starts leave the window
                freed, need = 0, held + tokens - self.tokens_per_minute
                for s in self._starts:
                    freed += s.tokens
                    if freed >= need:
                        waits.append(self.period_s - (now - s.at))
                        break
        return max(waits)

    # the plain context manager: one request of unknown size
    def __enter__(self) -> RateLimiter:
        self._slots.acquire()
        try:
            self._admit(0)
        except BaseException:
            self._slots.release()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._slots.release()

    def acquire(self) -> None:
        """Block until a slot is free and the windows allow another request (no tokens)."""
        self.__enter__()

    def release(self) -> None:
        self._slots.release()


_SHARED: dict[tuple[str, int, int | None, int | None], RateLimiter] = {}
_SHARED_LOCK = threading.Lock()
_SHARE = 1  # how many processes split each provider's limits (a bench's workers)


def split_between(processes: int) -> None:
    """This process is one of `processes` that split every provider's limits evenly (a bench
    with --workers N calls it in each worker): each gets 1/N of the requests and tokens per
    minute, and of the concurrency, rounded down but at least 1."""
    global _SHARE
    if processes < 1:
        raise ValueError(f"processes must be >= 1, got {processes}")
    with _SHARED_LOCK:
        _SHARE = processes


def _part(limit: int | None) -> int | None:
    return None if limit is None else max(limit // _SHARE, 1)


def shared_limiter(
    provider: str, concurrency: int = 4, rpm: int | None = None, tpm: int | None = None
) -> RateLimiter:
    """The one limiter of this process for `provider` (its spec: kind, server and model) under
    these limits (this process's part of them, see `split_between`): every run in the process
    that calls the same provider shares it."""
    with _SHARED_LOCK:
        concurrency, rpm, tpm = _part(concurrency) or 1, _part(rpm), _part(tpm)
        key = (provider, concurrency, rpm, tpm)
        limiter = _SHARED.get(key)
        if limiter is None:
            limiter = _SHARED[key] = RateLimiter(concurrency, rpm, tpm)
        return limiter


@contextmanager
def limited(limiter: RateLimiter | None, tokens: int) -> Iterator[Ticket | None]:
    """`limiter.slot(tokens)`, or nothing when there is no limiter. A rate-limit error with a
    retry-after hint raised inside pauses every caller of the limiter for that long."""
    if limiter is None:
        yield None
        return
    with limiter.slot(tokens) as ticket:
        try:
            yield ticket
        except Exception as exc:
            hint = getattr(exc, "retry_after_s", None)
            if getattr(exc, "reason", None) == "rate_limited" and hint:
                limiter.back_off(float(hint))
            raise


def request_tokens(texts: list[str], max_tokens: int) -> int:
    """A request's worst case for the token window: its prompt's estimate plus the reply cap."""
    from agents.core.llm.base import estimate_tokens

    return sum(estimate_tokens(t) for t in texts) + max(int(max_tokens), 0)
