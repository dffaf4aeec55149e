"""Budgets: how many tokens, dollars, seconds and GPU seconds a run may spend, held hard.

    tracker = BudgetTracker(Budget(max_tokens=200_000, max_cost_usd=2.0), ledger=run / "budget.json")
    held = tracker.reserve("generator", [system, prompt], max_tokens=8192, price=provider.price())
    completion = provider.complete(..., max_tokens=held.max_tokens)   # the cap that fits
    tracker.settle(held, completion)     # or tracker.release(held) when the call failed
    tracker.add_gpu_s(verdict_gpu_time)  # the caller adds GPU time it measured
    tracker.exceeded()                   # None, or which limit is spent, in words

Hard limits. A model call is made only when its worst case fits in what is left: its input
tokens (estimated before the call) plus its reply cap, priced at the model's rates, within the
token and cost limits, after what is spent and what the calls still in flight hold. The reply
cap (`Reservation.max_tokens`) is the caller's `max_tokens` lowered to what fits; when not even
`min_reply_tokens` fit, `reserve` waits for calls in flight to settle and looks again, and with
none in flight it raises BudgetExceeded: the call is not made. A server never sends more reply
tokens than the cap, so the run ends with spend <= budget as long as the input estimate holds.

The input estimate is deliberately high: UTF-8 bytes of the prompt times a tokens-per-byte rate
(1/3 to begin with, raised to 1.1 x the highest rate a server-counted call of this run showed),
plus a few tokens per message. A call whose server-counted usage still exceeds its reservation
is counted in `overruns` (and the next reservation sees the real spend).

A limit is spent when usage reaches it (>=). Calls whose model has no known price count as
zero dollars: the snapshot reports them as `unpriced_calls`, so a cost total is a lower bound
whenever that number is not zero. Wall time runs from the tracker's creation; a resumed run
carries the time already spent. The tracker is thread-safe (parallel generator calls).

Durable. With a `ledger` path (the run's budget.json) every reserve, settle, release, GPU-time
and fault count rewrites that file atomically and fsync'd before returning, so a reservation is
on disk before its request leaves. A process killed during a call leaves its reservation under
`in_flight`; `BudgetTracker.resume` counts each as spent at its reserved size
(`interrupted_calls`): after a kill the count can be too high, never too low.

Faults. `count_fault(kind)` counts services that stalled or answered garbage (llm_deadline,
llm_malformed, kb_stalled, ncu_timeout, ...): the snapshot's `faults`, beside the spend.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agents.core.llm.base import BudgetExceeded, Completion
from agents.core.llm.pricing import Price

#: the default of the setting llm.min_reply_tokens (agents/core/settings.py)
MIN_REPLY_TOKENS = 256
TOKENS_PER_BYTE = 1 / 3  # the starting estimate: no tokenizer in use spends fewer bytes a token
ESTIMATE_MARGIN = 1.1  # over the highest rate a server has counted in this run
MESSAGE_TOKENS = 8  # role markers and separators, per message


@dataclass(frozen=True)
class Budget:
    """Limits; None means unlimited."""

    max_tokens: int | None = None
    max_cost_usd: float | None = None
    max_wall_s: float | None = None
    max_gpu_s: float | None = None

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value is not None and value < 0:
                raise ValueError(f"Budget.{name} must be >= 0 or None, got {value}")


@dataclass(frozen=True)
class Reservation:
    """What one model call in flight holds of the budget: its estimated input, its reply cap
    and, when the model's price is known, the most it can cost."""

    id: int
    node: str
    input_tokens: int
    max_tokens: int
    cost_usd: float | None
    prompt_bytes: int
    at: str  # when it was made (UTC, ISO 8601)


class BudgetTracker:
    """Accumulates what a run spends, reserves each model call's worst case before it is made,
    and says when a `Budget` limit is reached."""

    def __init__(
        self,
        budget: Budget | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall_s_before: float = 0.0,
        ledger: Path | None = None,
    ) -> None:
        """`wall_s_before`: wall time already spent by an earlier process of the same run;
        `ledger`: the file every change is written to (None: kept in memory only)."""
        self.budget = budget or Budget()
        self.ledger = Path(ledger) if ledger is not None else None
        self._clock = clock
        self._started = clock()
        self._wall_s_before = wall_s_before
        self._cond = threading.Condition(threading.RLock())
        self.input_tokens = 0
        self.output_tokens = 0
        self.cost_usd = 0.0
        self.calls = 0
        self.failed_calls = 0
        self.interrupted_calls = 0
        self.overruns = 0
        self.unpriced_calls = 0
        self.scripted_calls = 0
        self.llm_latency_s = 0.0
        self.gpu_s = 0.0
        self.faults: dict[str, int] = {}
        self.tokens_per_byte = TOKENS_PER_BYTE
        self._in_flight: dict[int, Reservation] = {}
        self._next_id = 1

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def wall_s(self) -> float:
        return self._wall_s_before + (self._clock() - self._started)

    @property
    def in_flight(self) -> list[Reservation]:
        with self._cond:
            return list(self._in_flight.values())

    # -- model calls ----------------------------------------------------------------------
    def estimate_input(self, texts: list[str]) -> tuple[int, int]:
        """(estimated input tokens, UTF-8 bytes) of a prompt made of `texts` (system, turns)."""
        size = sum(len(t.encode("utf-8")) for t in texts)
        with self._cond:
            rate = self.tokens_per_byte
        return math.ceil(size * rate) + MESSAGE_TOKENS * (len(texts) + 1), size

    def reserve(
        self,
        node: str,
        texts: list[str],
        *,
        max_tokens: int,
        price: Price | None,
        min_reply_tokens: int = MIN_REPLY_TOKENS,
    ) -> Reservation:
        """Hold the worst case of one call whose prompt is `texts`; raise BudgetExceeded when it
        cannot fit (see the module doc). The reservation's `max_tokens` is the reply cap to send."""
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        input_tokens, size = self.estimate_input(texts)
        want = min(min_reply_tokens, max_tokens)
        with self._cond:
            while True:
                spent = self._exceeded()
                if spent is not None:
                    raise BudgetExceeded(f"budget spent: {spent}", limit=spent.split(":", 1)[0])
                room, limit = self._room(input_tokens, price)
                if room is None or room >= want:
                    break
                if not self._in_flight:
                    raise BudgetExceeded(
                        f"budget spent: {self._usage_text(limit)}; the next {node} call would "
                        f"need about {input_tokens} input tokens and at least {want} reply "
                        "tokens (llm.min_reply_tokens), which do not fit: not made",
                        limit=limit,
                    )
                self._cond.wait(timeout=5.0)  # another call settles, then look again
            cap = max_tokens if room is None else min(max_tokens, room)
            cost = None
            if price is not None:
                cost = (input_tokens * price.input_per_mtok + cap * price.output_per_mtok) / 1e6
            held = Reservation(
                id=self._next_id,
                node=node,
                input_tokens=input_tokens,
                max_tokens=cap,
                cost_usd=cost,
                prompt_bytes=size,
                at=datetime.now(UTC).isoformat(timespec="seconds"),
            )
            self._next_id += 1
            self._in_flight[held.id] = held
            self._save()
        return held

    def settle(self, held: Reservation, completion: Completion) -> None:
        """The call `held` was for returned `completion`: its real usage replaces the hold."""
        usage = completion.usage
        with self._cond:
            self._in_flight.pop(held.id, None)
            if usage.total_tokens > held.input_tokens + held.max_tokens or (
                held.cost_usd is not None
                and usage.cost_usd is not None
                and usage.cost_usd > held.cost_usd
            ):
                self.overruns += 1
            if not usage.estimated and held.prompt_bytes > 0:
                seen = usage.input_tokens / held.prompt_bytes * ESTIMATE_MARGIN
                self.tokens_per_byte = max(self.tokens_per_byte, seen)
            self._record(completion)
            self._save()
            self._cond.notify_all()

    def release(self, held: Reservation) -> None:
        """The call `held` was for failed without an answer: nothing was spent."""
        with self._cond:
            self._in_flight.pop(held.id, None)
            self.failed_calls += 1
            self._save()
            self._cond.notify_all()

    def record(self, completion: Completion) -> None:
        """Add one call's usage, cost and latency (a call made without a reservation)."""
        with self._cond:
            self._record(completion)
            self._save()

    def _record(self, completion: Completion) -> None:
        usage = completion.usage
        self.calls += 1
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.llm_latency_s += completion.latency_s
        if completion.scripted:
            self.scripted_calls += 1
        if usage.cost_usd is None:
            self.unpriced_calls += 1
        else:
            self.cost_usd += usage.cost_usd

    def _room(self, input_tokens: int, price: Price | None) -> tuple[int | None, str]:
        """(most reply tokens a call with this input may have now, the limit that binds);
        (None, "") when no limit binds."""
        b = self.budget
        held = list(self._in_flight.values())
        rooms: list[tuple[int, str]] = []
        if b.max_tokens is not None:
            holding = sum(r.input_tokens + r.max_tokens for r in held)
            rooms.append((b.max_tokens - self.tokens - holding - input_tokens, "tokens"))
        if b.max_cost_usd is not None and price is not None:
            holding_usd = sum(r.cost_usd or 0.0 for r in held)
            left = (
                b.max_cost_usd
                - self.cost_usd
                - holding_usd
                - input_tokens * price.input_per_mtok / 1e6
            )
            rate = price.output_per_mtok / 1e6
            if rate > 0:
                rooms.append((math.floor(left / rate), "cost_usd"))
            elif left < 0:
                rooms.append((-1, "cost_usd"))
        if not rooms:
            return None, ""
        return min(rooms)

    # -- other spend, faults ----------------------------------------------------------------
    def add_gpu_s(self, seconds: float) -> None:
        """Add GPU time the caller measured (evaluation, profiling)."""
        if seconds < 0:
            raise ValueError(f"GPU seconds must be >= 0, got {seconds}")
        with self._cond:
            self.gpu_s += seconds
            self._save()

    def count_fault(self, kind: str) -> int:
        """Count one stalled or garbled service event of `kind`; returns the count so far."""
        with self._cond:
            self.faults[kind] = self.faults.get(kind, 0) + 1
            self._save()
            return self.faults[kind]

    # -- limits -----------------------------------------------------------------------------
    def _usage_text(self, name: str) -> str:
        b = self.budget
        used, limit, fmt = {
            "tokens": (self.tokens, b.max_tokens, "{:d}"),
            "cost_usd": (self.cost_usd, b.max_cost_usd, "${:.4f}"),
            "wall_s": (self.wall_s, b.max_wall_s, "{:.1f} s"),
            "gpu_s": (self.gpu_s, b.max_gpu_s, "{:.1f} s"),
        }[name]
        return f"{name}: {fmt.format(used)} used of {fmt.format(limit)}"

    def _exceeded(self) -> str | None:
        b = self.budget
        for name, used, limit in (
            ("tokens", self.tokens, b.max_tokens),
            ("cost_usd", self.cost_usd, b.max_cost_usd),
            ("wall_s", self.wall_s, b.max_wall_s),
            ("gpu_s", self.gpu_s, b.max_gpu_s),
        ):
            if limit is not None and used >= limit:
                return self._usage_text(name)
        return None

    def exceeded(self) -> str | None:
        """Which limit is spent, e.g. "tokens: 10500 used of 10000", or None."""
        with self._cond:
            return self._exceeded()

    def check(self) -> None:
        """Raise BudgetExceeded if any limit is spent."""
        spent = self.exceeded()
        if spent is not None:
            raise BudgetExceeded(f"budget spent: {spent}", limit=spent.split(":", 1)[0])

    # -- the record on disk -----------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """A JSON-serialisable record of limits, usage, calls in flight and faults."""
        with self._cond:
            used = {
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "tokens": self.tokens,
                "cost_usd": round(self.cost_usd, 6),
                "cost_is_lower_bound": self.unpriced_calls > 0,
                "calls": self.calls,
                "failed_calls": self.failed_calls,
                "interrupted_calls": self.interrupted_calls,
                "overruns": self.overruns,
                "unpriced_calls": self.unpriced_calls,
                "scripted_calls": self.scripted_calls,
                "llm_latency_s": round(self.llm_latency_s, 3),
                "wall_s": round(self.wall_s, 3),
                "gpu_s": round(self.gpu_s, 3),
            }
            return {
                "limits": asdict(self.budget),
                "used": used,
                "in_flight": [asdict(r) for r in self._in_flight.values()],
                "faults": dict(self.faults),
                "tokens_per_byte": round(self.tokens_per_byte, 6),
                "exceeded": self._exceeded(),
            }

    def save(self) -> None:
        """Write the ledger now (no-op without one)."""
        with self._cond:
            self._save()

    def _save(self) -> None:
        if self.ledger is None:
            return
        write_durably(self.ledger, self.snapshot())

    @classmethod
    def from_snapshot(
        cls,
        snapshot: dict[str, Any],
        *,
        clock: Callable[[], float] = time.monotonic,
        ledger: Path | None = None,
    ) -> BudgetTracker:
        """Continue counting from a snapshot written by an earlier process (`--resume`). Calls
        it lists as in flight died with that process: each counts as spent at its reservation."""
        used = snapshot["used"]
        tracker = cls(
            Budget(**snapshot["limits"]), clock=clock, wall_s_before=used["wall_s"], ledger=ledger
        )
        tracker.input_tokens = used["input_tokens"]
        tracker.output_tokens = used["output_tokens"]
        tracker.cost_usd = used["cost_usd"]
        tracker.calls = used["calls"]
        tracker.failed_calls = used.get("failed_calls", 0)
        tracker.interrupted_calls = used.get("interrupted_calls", 0)
        tracker.overruns = used.get("overruns", 0)
        tracker.unpriced_calls = used["unpriced_calls"]
        tracker.scripted_calls = used["scripted_calls"]
        tracker.llm_latency_s = used["llm_latency_s"]
        tracker.gpu_s = used["gpu_s"]
        tracker.faults = dict(snapshot.get("faults", {}))
        tracker.tokens_per_byte = max(
            TOKENS_PER_BYTE, float(snapshot.get("tokens_per_byte", TOKENS_PER_BYTE))
        )
        for held in snapshot.get("in_flight", []):
            tracker.calls += 1
            tracker.interrupted_calls += 1
            tracker.input_tokens += held["input_tokens"]
            tracker.output_tokens += held["max_tokens"]
            if held.get("cost_usd") is None:
                tracker.unpriced_calls += 1
            else:
                tracker.cost_usd += held["cost_usd"]
        return tracker

    @classmethod
    def resume(
        cls,
        budget: Budget,
        ledger: Path,
        checkpoint_spend: dict[str, Any] | None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> tuple[BudgetTracker, str | None]:
        """The tracker of a resumed run: from its ledger (the latest record: written before and
        after every call), else from the checkpoint's snapshot, with this resume's `budget`.
        Returns (tracker, note): the note says what was recovered or why the ledger was not
        used; None when there was nothing to say."""
        note = None
        spend = None
        if ledger.is_file():
            try:
                spend = json.loads(ledger.read_text(encoding="utf-8"))
                cls.from_snapshot(spend)  # shape check
            except (OSError, ValueError, KeyError, TypeError) as exc:
                spend = None
                note = (
                    f"{ledger}: unreadable ({type(exc).__name__}: {exc}); the spend is taken "
                    "from the checkpoint instead and may miss the calls of the last step"
                )
        if spend is None:
            spend = checkpoint_spend
        if not spend:
            tracker = cls(budget, clock=clock, ledger=ledger)
            tracker.save()
            return tracker, note
        tracker = cls.from_snapshot(spend, clock=clock, ledger=ledger)
        tracker.budget = budget
        if checkpoint_spend:  # a kill can land after the checkpoint's snapshot, or before it
            tracker._wall_s_before = max(
                tracker._wall_s_before, checkpoint_spend.get("used", {}).get("wall_s", 0.0)
            )
        lost = spend.get("in_flight", [])
        if lost and note is None:
            note = (
                f"{len(lost)} model call(s) were in flight when the run stopped; each counts as "
                "spent at its reservation "
                f"({sum(r['input_tokens'] + r['max_tokens'] for r in lost)} tokens)"
            )
        tracker.save()
        return tracker, note


def write_durably(path: Path, data: Any) -> None:
    """Replace `path` with `data` as JSON, atomically, and make it survive a crash (fsync)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.write(json.dumps(data, indent=2) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
