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


class _Clock:
    """A clock the test moves: sleeping advances it, so waits are computed, not slept."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_tokens_per_window_wait_for_the_oldest_to_leave() -> None:
    clock = _Clock()
    limiter = RateLimiter(10, tokens_per_minute=100, clock=clock, sleep=clock.sleep)
    with limiter.slot(tokens=60):
        pass
    assert clock.now == 0.0
    with limiter.slot(tokens=60):  # 120 > 100: waits until the first leaves the window
        pass
    assert clock.now == pytest.approx(60.0)
    assert limiter.window() == (1, 60)


def test_settle_replaces_the_worst_case_by_what_was_used() -> None:
    clock = _Clock()
    limiter = RateLimiter(10, tokens_per_minute=100, clock=clock, sleep=clock.sleep)
    with limiter.slot(tokens=90) as ticket:
        ticket.settle(10)  # the reply was short
    with limiter.slot(tokens=85):
        pass
    assert clock.now == 0.0 and limiter.window() == (2, 95)


def test_a_request_larger_than_the_window_starts_alone_instead_of_never() -> None:
    clock = _Clock()
    limiter = RateLimiter(10, tokens_per_minute=100, clock=clock, sleep=clock.sleep)
    with limiter.slot(tokens=500):
        pass
    assert clock.now == 0.0
    with limiter.slot(tokens=1):
        pass
    assert clock.now == pytest.approx(60.0)


def test_requests_and_tokens_together_take_the_longer_wait() -> None:
    clock = _Clock()
    limiter = RateLimiter(
        10, requests_per_minute=2, tokens_per_minute=1000, clock=clock, sleep=clock.sleep
    )
    for at in (0.0, 10.0):
        clock.now = at
        with limiter.slot(tokens=10):
            pass
    clock.now = 20.0
    with limiter.slot(tokens=10):  # the request window frees at 60 (the first start leaves)
        pass
    assert clock.now == pytest.approx(60.0)


def test_a_servers_retry_after_pauses_every_caller() -> None:
    from agents.core.llm.base import LLMRetryableError
    from agents.core.llm.concurrency import limited

    clock = _Clock()
    limiter = RateLimiter(10, clock=clock, sleep=clock.sleep)
    with pytest.raises(LLMRetryableError):
        with limited(limiter, 10):
            raise LLMRetryableError("429", status=429, retry_after_s=7.0, reason="rate_limited")
    with limited(limiter, 10):  # another caller, not the one that got the 429
        pass
    assert clock.now == pytest.approx(7.0)
    with pytest.raises(LLMRetryableError):  # a 5xx carries no pause for the others
        with limited(limiter, 10):
            raise LLMRetryableError("503", status=503, retry_after_s=3.0)
    with limited(limiter, 10):
        pass
    assert clock.now == pytest.approx(7.0)


def test_one_limiter_per_provider_and_a_benchs_workers_split_it() -> None:
    from agents.core.llm import concurrency

    a = concurrency.shared_limiter("openai:m-test-1", 4, 100, 9000)
    assert concurrency.shared_limiter("openai:m-test-1", 4, 100, 9000) is a
    assert concurrency.shared_limiter("openai:m-test-2", 4, 100, 9000) is not a
    try:
        concurrency.split_between(3)
        part = concurrency.shared_limiter("openai:m-test-1", 4, 100, 9000)
        assert (part.max_concurrent, part.requests_per_minute, part.tokens_per_minute) == (
            1,
            33,
            3000,
        )
        assert concurrency.shared_limiter("openai:m-test-1", 2, None, None).max_concurrent == 1
    finally:
        concurrency.split_between(1)
    with pytest.raises(ValueError):
        concurrency.split_between(0)
