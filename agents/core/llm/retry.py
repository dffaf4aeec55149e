"""Retrying network calls: which HTTP failures to repeat, how long to wait, and when to stop.

Both network providers switch their SDK's own retries off (`max_retries=0`) and run each request
through `call_with_retries`, so there is one retry policy, visible and tested here:

- repeated: 408, 409, 429 and every 5xx (529 "overloaded" included), connection errors, a
  request past its deadline (llm.timeout, transport.py) and a malformed reply body (not JSON,
  HTML, cut short, the wrong shape, too large). These surface as `LLMRetryableError`, whose
  `reason` says which; `call_with_retries(..., on_failure=...)` reports each failed attempt as
  it happens, so the caller can log and count it.
- not repeated: every other 4xx (400 bad request, 401 bad key, 403 no access, 404 unknown
  model, 413 too large, 422). These surface at once as `LLMFatalError`, with what to do.
- the wait before retry n is `min(max_s, base_s * 2**(n-1))` scaled by a random factor in
  [0.5, 1) ("equal jitter": parallel callers spread out, yet never retry instantly), unless the
  server sent `retry-after` / `retry-after-ms`, which is honoured up to `retry_after_cap_s`.
"""

from __future__ import annotations

import email.utils
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from agents.core.llm.base import (
    FailedAttempt,
    LLMError,
    LLMFatalError,
    LLMRetryableError,
    OnFailure,
)

log = logging.getLogger("kernforge.llm")

T = TypeVar("T")

RETRYABLE_STATUSES = frozenset({408, 409, 429})


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. `attempts` counts the first request too (attempts=1: no retry)."""

    attempts: int = 5
    base_s: float = 1.0
    max_s: float = 30.0
    retry_after_cap_s: float = 60.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"RetryPolicy.attempts must be >= 1, got {self.attempts}")
        if self.base_s < 0 or self.max_s < 0 or self.retry_after_cap_s < 0:
            raise ValueError("RetryPolicy waits (base_s, max_s, retry_after_cap_s) must be >= 0")

    def backoff_s(self, retry_number: int) -> float:
        """The jittered wait before retry `retry_number` (1 = the first retry)."""
        ceiling = min(self.max_s, self.base_s * 2 ** (retry_number - 1))
        return ceiling * random.uniform(0.5, 1.0)

    def wait_s(self, retry_number: int, error: BaseException | None) -> float:
        """The wait before retry `retry_number`, after `error`: the server's hint if it gave one."""
        hint = error.retry_after_s if isinstance(error, LLMRetryableError) else None
        if hint is not None:
            return min(max(hint, 0.0), self.retry_after_cap_s)
        return self.backoff_s(retry_number)


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUSES or status >= 500


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait according to `retry-after-ms` or `retry-after` (seconds or HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass  # malformed: fall through to retry-after
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass  # not a number: an HTTP date
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)


def server_message(body: object, fallback: str = "") -> str:
    """The human message inside an error body: `{"error": {"message": ...}}`, or the body itself."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return inner["message"]
        if isinstance(inner, str):
            return inner
    if isinstance(body, str) and body.strip():
        return body.strip()[:500]
    return fallback


def error_for_status(
    status: int,
    detail: str,
    *,
    who: str,
    key_env: str | None,
    headers: Mapping[str, str] | None = None,
) -> LLMError:
    """Turn an HTTP error answer into the right error family, with advice for the user.

    `who` names the provider, model and endpoint (e.g. "openai gpt-5.5 at https://..."),
    `key_env` the environment variable holding the key (None when no key is involved).
    """
    detail = detail.strip() or "(no message from the server)"
    if is_retryable_status(status):
        kind = {429: "rate limited", 408: "request timeout", 409: "conflict"}.get(
            status, "server error"
        )
        return LLMRetryableError(
            f"{who}: HTTP {status} {kind}: {detail}",
            status=status,
            retry_after_s=parse_retry_after(headers),
            reason="rate_limited" if status == 429 else "server_error",
        )
    key_hint = f"set {key_env} to a valid key" if key_env else "check the server's API key setting"
    advice = {
        400: "the request was rejected; check the model's limits (max_tokens, stop) and the prompt",
        401: f"authentication failed: {key_hint}",
        403: "the key has no access to this model or endpoint; use another model or key",
        404: "not found: check the model name and the base URL (an OpenAI-compatible server "
        "lists its model ids at GET /v1/models)",
        413: "the prompt is too large for this model; shorten the history or retrieved context",
        422: "the request was rejected as invalid; check the model's parameters",
    }.get(status, "the request was refused")
    return LLMFatalError(f"{who}: HTTP {status}: {advice}. Server said: {detail}", status=status)


def call_with_retries(
    attempt: Callable[[], T], policy: RetryPolicy, on_failure: OnFailure | None = None
) -> tuple[T, int]:
    """Run `attempt` until it returns, raises a non-retryable error, or attempts run out.

    Returns (result, number of attempts made). When attempts run out the last
    `LLMRetryableError` is raised again, its message prefixed with how many attempts were made.
    `on_failure` hears of every attempt that failed with a retryable error, as it happens (before
    the wait), the last one included: the caller logs and counts them.
    """
    attempts_made = 0

    def counted() -> T:
        nonlocal attempts_made
        attempts_made += 1
        return attempt()

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome is not None else None
        return policy.wait_s(state.attempt_number, error)

    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        pause = state.next_action.sleep if state.next_action is not None else 0.0
        # the caller's on_failure logs it for people and for the run's events; this is for debugging
        log.info(
            "%s; retry %d/%d in %.2f s", error, state.attempt_number, policy.attempts - 1, pause
        )
        if on_failure is not None and isinstance(error, LLMRetryableError):
            on_failure(FailedAttempt(state.attempt_number, policy.attempts, error, pause))

    retrying = Retrying(
        stop=stop_after_attempt(policy.attempts),
        wait=wait,
        retry=retry_if_exception_type(LLMRetryableError),
        before_sleep=before_sleep,
        sleep=policy.sleep,
        reraise=True,
    )
    try:
        result = retrying(counted)
    except LLMRetryableError as exc:
        if on_failure is not None:
            on_failure(FailedAttempt(attempts_made, policy.attempts, exc, None))
        if policy.attempts == 1:
            raise
        raise LLMRetryableError(
            f"gave up after {attempts_made} attempts; last error: {exc}",
            status=exc.status,
            retry_after_s=exc.retry_after_s,
            reason=exc.reason,
        ) from exc
    return result, attempts_made
