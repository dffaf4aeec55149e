"""Anthropic messages, through the official `anthropic` SDK.

    AnthropicProvider("claude-sonnet-4-6")

Key: `api_key=` or the ANTHROPIC_API_KEY environment variable; without either the constructor
raises LLMFatalError saying so. (The SDK sends it as `Authorization: Bearer ...`.)

Request details:
- the system prompt goes in the top-level `system` parameter, never as a message; any
  `Message(role="system")` in the list is folded into it, in order.
- the SDK's own retries are off; `retry.call_with_retries` repeats 429 / 5xx (529 "overloaded"
  included) / network failures, a request past its total deadline (`timeout_s`, enforced on
  every socket wait by transport.py) and a malformed reply body (wire.py).
- the reply body is read by us, not parsed by the SDK: its JSON and its shape are checked, and
  one over `max_body_bytes` is not read further.
- `temperature` is accepted for a uniform interface but NOT sent: the Messages API version this
  SDK speaks (2026-10-21) rejects sampling parameters with HTTP 400.
- input tokens include prompt-cache reads and writes when the API reports them; cost is
  estimated from `pricing.py` at the plain input rate.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

import anthropic
import httpx2 as httpx

from agents.core.llm.base import (
    MAX_BODY_BYTES,
    REQUEST_TIMEOUT_S,
    Completion,
    LLMFatalError,
    Message,
    OnFailure,
    Provider,
    Usage,
    check_messages,
)
from agents.core.llm.concurrency import RateLimiter, limited, request_tokens
from agents.core.llm.pricing import Price, cost_usd, price_for
from agents.core.llm.retry import RetryPolicy, call_with_retries, error_for_status, server_message
from agents.core.llm.transport import deadline, deadline_passed
from agents.core.llm.wire import http_client, json_object, need, optional_int, transport_error
from agents.core.redact import register_secret

KEY_ENV = "ANTHROPIC_API_KEY"
ANTHROPIC_URL = "https://api.anthropic.com"


class AnthropicProvider(Provider):
    """The Anthropic Messages API."""

    name = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = REQUEST_TIMEOUT_S,
        max_body_bytes: int = MAX_BODY_BYTES,
        retry: RetryPolicy | None = None,
        limiter: RateLimiter | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """`timeout_s`: the most one request may take in total, every byte of the reply included."""
        if not model:
            raise ValueError("AnthropicProvider needs a model name, e.g. 'claude-sonnet-4-6'")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        env = os.environ if env is None else env
        key = api_key or env.get(KEY_ENV)
        if not key:
            raise LLMFatalError(
                f"{KEY_ENV} is not set: export {KEY_ENV}=<your key> to use anthropic:{model}, "
                "or run with --llm offline (no model)"
            )
        register_secret(KEY_ENV, key)  # scrubbed from every run file
        self._model = model
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self.limiter = limiter
        self._who = f"anthropic {model}" + (f" at {base_url}" if base_url else "")
        url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_URL
        self._client = anthropic.Anthropic(
            api_key=key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
            http_client=http_client(anthropic.DefaultHttpxClient, url, max_body_bytes),
        )

    @property
    def model(self) -> str:
        return self._model

    def price(self) -> Price | None:
        return price_for("anthropic", self._model)

    def close(self) -> None:
        self._client.close()

    def complete(
        self,
        messages: list[Message],
        *,
        system: str | None = None,
        max_tokens: int = 4096,
        temperature: float = 0.2,
        stop: list[str] | None = None,
        node: str | None = None,
        on_failure: OnFailure | None = None,
    ) -> Completion:
        check_messages(messages)
        request = self._request(messages, system, max_tokens, stop)
        started = time.monotonic()
        reply, attempts = call_with_retries(lambda: self._send(request), self.retry, on_failure)
        latency_s = time.monotonic() - started
        return self._completion(reply, latency_s, attempts)

    def _request(
        self,
        messages: list[Message],
        system: str | None,
        max_tokens: int,
        stop: list[str] | None,
    ) -> dict[str, Any]:
        system_parts = [system] if system else []
        system_parts += [m.content for m in messages if m.role == "system"]
        turns = [{"role": m.role, "content": m.content} for m in messages if m.role != "system"]
        if not turns:
            raise LLMFatalError(f"{self._who}: the conversation has no user message to answer")
        request: dict[str, Any] = {
            "model": self._model,
            "max_tokens": max_tokens,
            "messages": turns,
        }
        if system_parts:
            request["system"] = "\n\n".join(system_parts)
        if stop:
            request["stop_sequences"] = stop
        return request

    def _send(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request under the deadline; the checked reply (see `_reply`)."""
        texts = [request.get("system", ""), *(m["content"] for m in request["messages"])]
        cap = request["max_tokens"]
        with limited(self.limiter, request_tokens(texts, cap)) as ticket, deadline(self.timeout_s):
            try:
                raw = self._client.messages.with_raw_response.create(**request)
            except anthropic.APIStatusError as exc:
                raise error_for_status(
                    exc.status_code,
                    server_message(exc.body, exc.message),
                    who=self._who,
                    key_env=KEY_ENV,
                    headers=dict(exc.response.headers),
                ) from exc
            except (anthropic.APITimeoutError, anthropic.APIConnectionError) as exc:
                raise transport_error(
                    exc, self._who, self.timeout_s, timed_out=deadline_passed()
                ) from exc
            reply = self._reply(raw.http_response)
            if ticket is not None:
                ticket.settle((reply["input_tokens"] or 0) + (reply["output_tokens"] or 0))
            return reply

    def _reply(self, response: httpx.Response) -> dict[str, Any]:
        """The fields of a message, checked: text, stop reason, model, token counts."""
        who = self._who
        data = json_object(who, response)
        blocks = need(who, response, data.get("content"), list, "content")
        texts = []
        for i, block in enumerate(blocks):
            need(who, response, block, dict, f"content[{i}]")
            if block.get("type") == "text":
                texts.append(need(who, response, block.get("text"), str, f"content[{i}].text"))
        usage = need(who, response, data.get("usage"), dict, "usage")
        counts = {
            name: optional_int(who, response, usage.get(name), f"usage.{name}")
            for name in (
                "input_tokens",
                "output_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
            )
        }
        stop = data.get("stop_reason")
        model = data.get("model")
        return {
            "text": "".join(texts),
            "finish": stop if isinstance(stop, str) else None,
            "model": model if isinstance(model, str) and model else None,
            "input_tokens": counts["input_tokens"]
            + counts["cache_creation_input_tokens"]
            + counts["cache_read_input_tokens"],
            "output_tokens": counts["output_tokens"],
        }

    def _completion(self, reply: dict[str, Any], latency_s: float, attempts: int) -> Completion:
        input_tokens, output_tokens = reply["input_tokens"], reply["output_tokens"]
        model = reply["model"] or self._model
        cost = cost_usd("anthropic", self._model, input_tokens, output_tokens)
        if cost is None:
            cost = cost_usd("anthropic", model, input_tokens, output_tokens)
        return Completion(
            text=reply["text"],
            usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost),
            model=model,
            provider=self.name,
            latency_s=latency_s,
            raw_finish_reason=reply["finish"],
            attempts=attempts,
        )
