"""Anthropic messages, through the official `anthropic` SDK.

    AnthropicProvider("claude-sonnet-4-6")

Key: `api_key=` or the ANTHROPIC_API_KEY environment variable; without either the constructor
raises LLMFatalError saying so. (The SDK sends it as `Authorization: Bearer ...`.)

Request details:
- the system prompt goes in the top-level `system` parameter, never as a message; any
  `Message(role="system")` in the list is folded into it, in order.
- the SDK's own retries are off; `retry.call_with_retries` repeats 429 / 5xx (529 "overloaded"
  included) / network failures.
- `temperature` is accepted for a uniform interface but NOT sent: the Messages API version this
  SDK speaks (2026-10-21) rejects sampling parameters with HTTP 400.
- input tokens include prompt-cache reads and writes when the API reports them; cost is
  estimated from `pricing.py` at the plain input rate.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from typing import Any

import anthropic

from agents.core.llm.base import (
    Completion,
    LLMFatalError,
    LLMRetryableError,
    Message,
    Provider,
    Usage,
    check_messages,
)
from agents.core.llm.concurrency import RateLimiter
from agents.core.llm.pricing import cost_usd
from agents.core.llm.retry import RetryPolicy, call_with_retries, error_for_status, server_message
from agents.core.redact import register_secret

KEY_ENV = "ANTHROPIC_API_KEY"


class AnthropicProvider(Provider):
    """The Anthropic Messages API."""

    name = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 300.0,
        retry: RetryPolicy | None = None,
        limiter: RateLimiter | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if not model:
            raise ValueError("AnthropicProvider needs a model name, e.g. 'claude-sonnet-4-6'")
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
        self._client = anthropic.Anthropic(
            api_key=key, base_url=base_url, timeout=timeout_s, max_retries=0
        )

    @property
    def model(self) -> str:
        return self._model

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
    ) -> Completion:
        check_messages(messages)
        request = self._request(messages, system, max_tokens, stop)
        started = time.monotonic()
        response, attempts = call_with_retries(lambda: self._send(request), self.retry)
        latency_s = time.monotonic() - started
        return self._completion(response, latency_s, attempts)

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

    def _send(self, request: dict[str, Any]) -> Any:
        guard = self.limiter if self.limiter is not None else contextlib.nullcontext()
        with guard:
            try:
                return self._client.messages.create(**request)
            except anthropic.APIStatusError as exc:
                raise error_for_status(
                    exc.status_code,
                    server_message(exc.body, exc.message),
                    who=self._who,
                    key_env=KEY_ENV,
                    headers=dict(exc.response.headers),
                ) from exc
            except anthropic.APITimeoutError as exc:
                raise LLMRetryableError(
                    f"{self._who}: no answer within the {self.timeout_s:g} s timeout"
                ) from exc
            except anthropic.APIConnectionError as exc:
                cause = exc.__cause__ or exc
                raise LLMRetryableError(
                    f"{self._who}: cannot connect ({cause}); is the network up and the URL right?"
                ) from exc

    def _completion(self, response: Any, latency_s: float, attempts: int) -> Completion:
        text = "".join(
            block.text for block in response.content if getattr(block, "type", None) == "text"
        )
        usage = response.usage
        input_tokens = (
            usage.input_tokens
            + (usage.cache_creation_input_tokens or 0)
            + (usage.cache_read_input_tokens or 0)
        )
        model = response.model or self._model
        cost = cost_usd("anthropic", self._model, input_tokens, usage.output_tokens)
        if cost is None:
            cost = cost_usd("anthropic", model, input_tokens, usage.output_tokens)
        return Completion(
            text=text,
            usage=Usage(
                input_tokens=input_tokens, output_tokens=usage.output_tokens, cost_usd=cost
            ),
            model=model,
            provider=self.name,
            latency_s=latency_s,
            raw_finish_reason=response.stop_reason,
            attempts=attempts,
        )
