"""OpenAI chat completions, through the official `openai` SDK, for OpenAI itself and for any
OpenAI-compatible server (vLLM, llama.cpp's server, Ollama, ...).

    OpenAIProvider("gpt-5.5")                                       # api.openai.com
    OpenAIProvider("qwen3-coder", base_url="http://127.0.0.1:8000/v1")   # a self-hosted server

Keys:
- OpenAI itself: `api_key=` or the OPENAI_API_KEY environment variable; without either the
  constructor raises LLMFatalError saying so.
- An OpenAI-compatible server (`base_url` given): `api_key=` or OPENAI_COMPATIBLE_API_KEY; when
  neither is set the placeholder "not-needed" is sent, since local servers usually ignore the
  key but the SDK insists on one. OPENAI_API_KEY is deliberately NOT sent to other hosts, so a
  real OpenAI key never leaks to a third-party server.

Request details:
- the SDK's own retries are off; `retry.call_with_retries` repeats 429 / 5xx / network failures.
- OpenAI itself gets `max_completion_tokens` (the current name; reasoning models reject
  `max_tokens`); compatible servers get `max_tokens`, which all of them understand.
- `temperature` is not sent to OpenAI's reasoning models (o-series, gpt-5 and later), which
  reject anything but their default; pass `send_temperature=True/False` to override.
- cost is estimated from `pricing.py` for OpenAI models; a compatible server's cost is None.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Mapping
from typing import Any

import openai

from agents.core.llm.base import (
    Completion,
    LLMFatalError,
    LLMRetryableError,
    Message,
    Provider,
    Usage,
    check_messages,
    estimate_tokens,
)
from agents.core.llm.concurrency import RateLimiter
from agents.core.llm.pricing import cost_usd
from agents.core.llm.retry import RetryPolicy, call_with_retries, error_for_status, server_message
from agents.core.redact import register_secret

KEY_ENV = "OPENAI_API_KEY"
COMPATIBLE_KEY_ENV = "OPENAI_COMPATIBLE_API_KEY"
PLACEHOLDER_KEY = "not-needed"

_REASONING_MODEL = re.compile(r"^(o\d|gpt-5|gpt-6)")


class OpenAIProvider(Provider):
    """Chat completions against OpenAI or an OpenAI-compatible `base_url`."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 300.0,
        retry: RetryPolicy | None = None,
        limiter: RateLimiter | None = None,
        send_temperature: bool | None = None,
        compatible: bool | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """`compatible`: whether `base_url` is an OpenAI-compatible server rather than OpenAI
        itself or a proxy in front of it; by default, True exactly when `base_url` is given."""
        if not model:
            raise ValueError("OpenAIProvider needs a model name, e.g. 'gpt-5.5'")
        env = os.environ if env is None else env
        self._model = model
        self.compatible = base_url is not None if compatible is None else compatible
        self.name = "openai-compatible" if self.compatible else "openai"
        self.base_url = base_url
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self.limiter = limiter
        if send_temperature is None:
            send_temperature = self.compatible or not _REASONING_MODEL.match(model)
        self.send_temperature = send_temperature
        if self.compatible:
            key = api_key or env.get(COMPATIBLE_KEY_ENV) or PLACEHOLDER_KEY
            self._key_env: str | None = COMPATIBLE_KEY_ENV
            self._who = f"openai-compatible {model} at {base_url}"
        else:
            key = api_key or env.get(KEY_ENV)
            if not key:
                raise LLMFatalError(
                    f"{KEY_ENV} is not set: export {KEY_ENV}=<your key> to use openai:{model}, "
                    "or run with --llm offline (no model), or --llm "
                    "openai-compatible:URL#MODEL for a self-hosted server"
                )
            self._key_env = KEY_ENV
            self._who = f"openai {model}" + (f" at {base_url}" if base_url else "")
        if key != PLACEHOLDER_KEY:
            register_secret(self._key_env or KEY_ENV, key)  # scrubbed from every run file
        self._client = openai.OpenAI(
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
        request = self._request(messages, system, max_tokens, temperature, stop)
        started = time.monotonic()
        response, attempts = call_with_retries(lambda: self._send(request), self.retry)
        latency_s = time.monotonic() - started
        return self._completion(response, request, latency_s, attempts)

    def _request(
        self,
        messages: list[Message],
        system: str | None,
        max_tokens: int,
        temperature: float,
        stop: list[str] | None,
    ) -> dict[str, Any]:
        wire = [{"role": "system", "content": system}] if system else []
        wire += [{"role": m.role, "content": m.content} for m in messages]
        request: dict[str, Any] = {"model": self._model, "messages": wire}
        if self.compatible:
            request["max_tokens"] = max_tokens
        else:
            request["max_completion_tokens"] = max_tokens
        if self.send_temperature:
            request["temperature"] = temperature
        if stop:
            request["stop"] = stop
        return request

    def _send(self, request: dict[str, Any]) -> Any:
        guard = self.limiter if self.limiter is not None else contextlib.nullcontext()
        with guard:
            try:
                return self._client.chat.completions.create(**request)
            except openai.APIStatusError as exc:
                raise self._status_error(exc) from exc
            except openai.APITimeoutError as exc:
                raise LLMRetryableError(
                    f"{self._who}: no answer within the {self.timeout_s:g} s timeout"
                ) from exc
            except openai.APIConnectionError as exc:
                cause = exc.__cause__ or exc
                raise LLMRetryableError(
                    f"{self._who}: cannot connect ({cause}); is the server up and the URL right?"
                ) from exc

    def _status_error(self, exc: openai.APIStatusError) -> Exception:
        detail = server_message(exc.body, exc.message)
        code = exc.body.get("code") if isinstance(exc.body, dict) else None
        if exc.status_code == 429 and code == "insufficient_quota":
            return LLMFatalError(
                f"{self._who}: HTTP 429 insufficient_quota: the account has no credit left; "
                f"add credit or use another key. Server said: {detail}",
                status=429,
            )
        return error_for_status(
            exc.status_code,
            detail,
            who=self._who,
            key_env=self._key_env,
            headers=dict(exc.response.headers),
        )

    def _completion(
        self, response: Any, request: dict[str, Any], latency_s: float, attempts: int
    ) -> Completion:
        if not response.choices:
            raise LLMFatalError(f"{self._who}: the answer held no choices (no reply text)")
        choice = response.choices[0]
        text = choice.message.content or choice.message.refusal or ""
        reported = response.usage
        if reported is not None:
            usage = Usage(
                input_tokens=reported.prompt_tokens, output_tokens=reported.completion_tokens
            )
        else:  # some compatible servers omit usage: estimate it, and say so
            prompt = "".join(m["content"] for m in request["messages"])
            usage = Usage(
                input_tokens=estimate_tokens(prompt),
                output_tokens=estimate_tokens(text),
                estimated=True,
            )
        model = response.model or self._model
        if not self.compatible:  # a self-hosted server costs GPU time, not a token price
            tokens = (usage.input_tokens, usage.output_tokens)
            usage.cost_usd = cost_usd("openai", self._model, *tokens)
            if usage.cost_usd is None:
                usage.cost_usd = cost_usd("openai", model, *tokens)
        return Completion(
            text=text,
            usage=usage,
            model=model,
            provider=self.name,
            latency_s=latency_s,
            raw_finish_reason=choice.finish_reason,
            attempts=attempts,
        )
