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
- the SDK's own retries are off; `retry.call_with_retries` repeats 429 / 5xx / network failures,
  a request past its total deadline (`timeout_s`, enforced on every socket wait by
  transport.py) and a malformed reply body (wire.py).
- the reply body is read by us, not parsed by the SDK: its JSON and its shape are checked, and
  one over `max_body_bytes` is not read further.
- OpenAI itself gets `max_completion_tokens` (the current name; reasoning models reject
  `max_tokens`); compatible servers get `max_tokens`, which all of them understand.
- `temperature` is not sent to OpenAI's reasoning models (o-series, gpt-5 and later), which
  reject anything but their default; pass `send_temperature=True/False` to override.
- cost is estimated from `pricing.py` for OpenAI models; a compatible server's cost is None.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping
from typing import Any

import httpx2 as httpx
import openai

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
    estimate_tokens,
)
from agents.core.llm.concurrency import RateLimiter, limited, request_tokens
from agents.core.llm.pricing import Price, cost_usd, price_for
from agents.core.llm.retry import RetryPolicy, call_with_retries, error_for_status, server_message
from agents.core.llm.transport import deadline, deadline_passed
from agents.core.llm.wire import (
    http_client,
    json_object,
    malformed,
    need,
    optional_int,
    transport_error,
)
from agents.core.redact import register_secret

KEY_ENV = "OPENAI_API_KEY"
COMPATIBLE_KEY_ENV = "OPENAI_COMPATIBLE_API_KEY"
PLACEHOLDER_KEY = "not-needed"
OPENAI_URL = "https://api.openai.com/v1"

_REASONING_MODEL = re.compile(r"^(o\d|gpt-5|gpt-6)")


class OpenAIProvider(Provider):
    """Chat completions against OpenAI or an OpenAI-compatible `base_url`."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = REQUEST_TIMEOUT_S,
        max_body_bytes: int = MAX_BODY_BYTES,
        retry: RetryPolicy | None = None,
        limiter: RateLimiter | None = None,
        send_temperature: bool | None = None,
        compatible: bool | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """`compatible`: whether `base_url` is an OpenAI-compatible server rather than OpenAI
        itself or a proxy in front of it; by default, True exactly when `base_url` is given.
        `timeout_s`: the most one request may take in total, every byte of the reply included."""
        if not model:
            raise ValueError("OpenAIProvider needs a model name, e.g. 'gpt-5.5'")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
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
        url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL
        self._client = openai.OpenAI(
            api_key=key,
            base_url=base_url,
            timeout=timeout_s,
            max_retries=0,
            http_client=http_client(openai.DefaultHttpxClient, url, max_body_bytes),
        )

    @property
    def model(self) -> str:
        return self._model

    def price(self) -> Price | None:
        return None if self.compatible else price_for("openai", self._model)

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
        request = self._request(messages, system, max_tokens, temperature, stop)
        started = time.monotonic()
        reply, attempts = call_with_retries(lambda: self._send(request), self.retry, on_failure)
        latency_s = time.monotonic() - started
        return self._completion(reply, request, latency_s, attempts)

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

    def _send(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request under the deadline; the checked reply (see `_reply`)."""
        texts = [m["content"] for m in request["messages"]]
        cap = request.get("max_tokens", request.get("max_completion_tokens", 0))
        with limited(self.limiter, request_tokens(texts, cap)) as ticket, deadline(self.timeout_s):
            try:
                raw = self._client.chat.completions.with_raw_response.create(**request)
            except openai.APIStatusError as exc:
                raise self._status_error(exc) from exc
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                raise transport_error(
                    exc, self._who, self.timeout_s, timed_out=deadline_passed()
                ) from exc
            reply = self._reply(raw.http_response)
            if ticket is not None and reply["usage"] is not None:
                ticket.settle(sum(n or 0 for n in reply["usage"]))
            return reply

    def _reply(self, response: httpx.Response) -> dict[str, Any]:
        """The fields of a chat completion, checked: text, finish reason, model, usage."""
        who = self._who
        data = json_object(who, response)
        choices = need(who, response, data.get("choices"), list, "choices")
        if not choices:
            raise malformed(who, response, "choices is empty (no reply text)")
        choice = need(who, response, choices[0], dict, "choices[0]")
        message = need(who, response, choice.get("message"), dict, "choices[0].message")
        text = message.get("content") or message.get("refusal") or ""
        need(who, response, text, str, "choices[0].message.content")
        finish = choice.get("finish_reason")
        if finish is not None:
            need(who, response, finish, str, "choices[0].finish_reason")
        model = data.get("model")
        usage = data.get("usage")
        if usage is not None:
            need(who, response, usage, dict, "usage")
            usage = (
                optional_int(who, response, usage.get("prompt_tokens"), "usage.prompt_tokens"),
                optional_int(
                    who, response, usage.get("completion_tokens"), "usage.completion_tokens"
                ),
            )
        return {
            "text": text,
            "finish": finish,
            "model": model if isinstance(model, str) and model else None,
            "usage": usage,
        }

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
        self, reply: dict[str, Any], request: dict[str, Any], latency_s: float, attempts: int
    ) -> Completion:
        text = reply["text"]
        if reply["usage"] is not None:
            usage = Usage(input_tokens=reply["usage"][0], output_tokens=reply["usage"][1])
        else:  # some compatible servers omit usage: estimate it, and say so
            prompt = "".join(m["content"] for m in request["messages"])
            usage = Usage(
                input_tokens=estimate_tokens(prompt),
                output_tokens=estimate_tokens(text),
                estimated=True,
            )
        model = reply["model"] or self._model
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
            raw_finish_reason=reply["finish"],
            attempts=attempts,
        )
