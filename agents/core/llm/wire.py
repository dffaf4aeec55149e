"""What both network providers do with one HTTP exchange besides their wire format: send it
through the deadline transport, turn the SDK's transport errors into ours, and read the reply
body as checked JSON.

A reply that is not what the API promises (not JSON, an HTML page, cut short, a JSON value of
the wrong shape, a body over the size cap) is a *malformed* reply: an `LLMRetryableError` with
reason "malformed", retried like a 5xx. Its message says what was wrong and how the body began.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2 as httpx

from agents.core.llm.base import LLMFatalError, LLMRetryableError
from agents.core.llm.transport import BodyTooLarge, DeadlineTransport, proxy_for

SNIPPET_CHARS = 120


def http_client(client_class: type[httpx.Client], url: str, max_body_bytes: int) -> httpx.Client:
    """An SDK's httpx client class (its DefaultHttpxClient) over the deadline transport."""
    try:
        transport = DeadlineTransport(max_body_bytes=max_body_bytes, proxy=proxy_for(url))
    except ValueError as exc:
        raise LLMFatalError(str(exc)) from None
    return client_class(transport=transport)


def transport_error(exc: Exception, who: str, timeout_s: float, *, timed_out: bool) -> Exception:
    """The SDK's APITimeoutError / APIConnectionError `exc` as an LLMRetryableError."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, BodyTooLarge):
            return LLMRetryableError(
                f"{who}: malformed reply: the body is longer than {cause.limit} bytes "
                "(llm.body_bytes); not read further",
                reason="malformed",
            )
        cause = cause.__cause__
    if timed_out:
        return LLMRetryableError(
            f"{who}: no complete answer within the {timeout_s:g} s deadline (llm.timeout)",
            reason="deadline",
        )
    detail = exc.__cause__ or exc
    return LLMRetryableError(
        f"{who}: cannot connect ({detail}); is the server up and the URL right?", reason="connect"
    )


def malformed(who: str, response: httpx.Response, why: str) -> LLMRetryableError:
    body = response.content
    start = body[:SNIPPET_CHARS].decode("utf-8", errors="replace")
    kind = response.headers.get("content-type", "no content-type")
    return LLMRetryableError(
        f"{who}: malformed reply (HTTP {response.status_code}, {len(body)} bytes, {kind}): "
        f"{why}; it starts {start!r}",
        reason="malformed",
    )


def json_object(who: str, response: httpx.Response) -> dict[str, Any]:
    """The reply body as a JSON object, or a malformed-reply error saying why not."""
    try:
        data = json.loads(response.content)
    except (ValueError, UnicodeDecodeError) as exc:
        raise malformed(who, response, f"not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise malformed(who, response, f"a JSON {type(data).__name__}, not an object")
    return data


def need(who: str, response: httpx.Response, value: Any, kind: type, where: str) -> Any:
    """`value` if it is a `kind`, else a malformed-reply error naming the field `where`."""
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise malformed(who, response, f"{where} is {type(value).__name__}, not {kind.__name__}")
    return value


def optional_int(who: str, response: httpx.Response, value: Any, where: str) -> int:
    """A token count that may be missing or null (0 then); a negative or non-integer one is
    malformed."""
    if value is None:
        return 0
    count = need(who, response, value, int, where)
    if count < 0:
        raise malformed(who, response, f"{where} is negative ({count})")
    return count
