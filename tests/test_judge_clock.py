"""The candidate's timeout counts from when its worker starts the job: a worker still starting up
(importing torch on a loaded machine, a cold one) spends the judge's time, which has an allowance
of its own (`judge.BOOT_ALLOWANCE_S`)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks.harness import judge
from benchmarks.harness.messages import PROTOCOL_VERSION, StartEvent
from benchmarks.verdict import ErrorClass


class _Worker:
    """A worker that starts its job `boot_s` after the judge handed it over, then runs for
    `run_s` (or for ever) and exits."""

    def __init__(self, boot_s: float, run_s: float | None) -> None:
        self.t0 = time.perf_counter()
        self.boot_s, self.run_s = boot_s, run_s
        self.sent = False
        self.killed = False
        self.proc = SimpleNamespace(poll=self._poll)
        # its op pipe: open, nothing on it (the judge's clock is what is tested here)
        self.ops = SimpleNamespace(closed=threading.Event())
        self.folder = Path("/nonexistent-kf-clock-test")

    def _poll(self) -> int | None:
        if self.killed:
            return -9
        done = self.run_s is not None and time.perf_counter() - self.t0 > self.boot_s + self.run_s
        return 0 if done else None

    def poll_events(self) -> list[StartEvent]:
        if not self.sent and time.perf_counter() - self.t0 > self.boot_s:
            self.sent = True
            return [StartEvent(pid=1, protocol=PROTOCOL_VERSION)]
        return []

    def last_step(self) -> str:
        return "during the call"

    def kill(self) -> None:
        self.killed = True


class _Checker:
    failure = None
    answered = False  # the correctness stage not answered: no after-timing file to take

    def handle(self, evt: object) -> None:
        pass


class _Watch:
    def due(self, now: float) -> bool:
        return False


def _converse(worker: _Worker, timeout_s: float) -> judge._Failure | None:
    t0 = time.perf_counter()
    return judge._converse(worker, _Checker(), _Watch(), t0 + timeout_s, timeout_s)  # type: ignore[arg-type]


def test_a_slow_start_up_is_not_the_candidates_time() -> None:
    # starts 0.6 s late, then runs 0.5 s: within a 0.8 s limit counted from its start
    assert _converse(_Worker(boot_s=0.6, run_s=0.5), timeout_s=0.8) is None


def test_the_limit_still_holds_from_the_start() -> None:
    t0 = time.perf_counter()
    failed = _converse(_Worker(boot_s=0.3, run_s=None), timeout_s=0.5)
    assert failed is not None and failed.error == ErrorClass.TIMEOUT
    assert "ran past the" in failed.message
    assert time.perf_counter() - t0 == pytest.approx(0.8, abs=0.3)


def test_a_worker_that_never_starts_is_the_judges_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judge, "BOOT_ALLOWANCE_S", 0.3)
    failed = _converse(_Worker(boot_s=60.0, run_s=None), timeout_s=0.2)
    assert failed is not None and failed.error == ErrorClass.HARNESS_ERROR
    assert (
        "did not start the job" in failed.message and "before any candidate code" in failed.message
    )
