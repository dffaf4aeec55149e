"""The rate limiter: concurrency cap and requests per window, across threads."""

from __future__ import annotations

import threading
import time

import pytest

from agents.core.llm import RateLimiter


def _run_threads(n: int, target: object) -> None:
    threads = [threading.Thread(target=target) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_never_more_than_max_concurrent_in_flight() -> None:
    limiter = RateLimiter(max_concurrent=2)
    in_flight, peak = 0, 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal in_flight, peak
        with limiter:
            with lock:
                in_flight += 1
                peak = max(peak, in_flight)
            time.sleep(0.03)
            with lock:
                in_flight -= 1

    _run_threads(8, work)
    assert peak == 2


def test_requests_per_window_are_spaced() -> None:
    limiter = RateLimiter(max_concurrent=10, requests_per_minute=3, period_s=0.3)
    starts: list[float] = []
    lock = threading.Lock()

    def work() -> None:
        with limiter:
            with lock:
                starts.append(time.monotonic())

    began = time.monotonic()
    _run_threads(6, work)
    starts.sort()
    assert starts[2] - began < 0.2  # the first three go at once
    assert starts[3] - starts[0] >= 0.29  # the fourth waits for the window to slide


def test_slot_is_released_when_the_call_fails() -> None:
    limiter = RateLimiter(max_concurrent=1)
    with pytest.raises(RuntimeError):
        with limiter:
            raise RuntimeError("boom")
    with limiter:
        pass


@pytest.mark.parametrize(
    "kwargs",
    [{"max_concurrent": 0}, {"requests_per_minute": 0}, {"period_s": 0}],
)
def test_bad_settings_are_rejected(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        RateLimiter(**kwargs)
