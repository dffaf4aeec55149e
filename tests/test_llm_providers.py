"""The OpenAI and Anthropic providers against real HTTP servers on 127.0.0.1.

No SDK is mocked: the official clients talk over sockets to `llm_servers.FakeLLMServer`, which
answers in each wire format with scripted statuses, bodies, headers and delays.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from llm_servers import (
    FakeLLMServer,
    anthropic_error,
    anthropic_reply,
    closed_port,
    openai_error,
    openai_reply,
)

from agents.core.llm import (
    LLMFatalError,
    LLMRetryableError,
    Message,
    RateLimiter,
    RetryPolicy,
    make_provider,
)
from agents.core.llm.anthropic_provider import AnthropicProvider
from agents.core.llm.openai_provider import OpenAIProvider
from agents.core.llm.retry import parse_retry_after

FAST = RetryPolicy(attempts=3, base_s=0.01, max_s=0.02, retry_after_cap_s=5.0)
HELLO = [Message(role="user", content="write a kernel")]


@dataclass
class Kit:
    """How to build a provider and its answers, for tests shared by both wire formats."""

    kind: str
    make: Callable[..., Any]
    ok: Callable[..., dict]
    error: Callable[[str], dict]


def _make_openai(url: str, **kw: Any) -> OpenAIProvider:
    kw.setdefault("retry", FAST)
    kw.setdefault("timeout_s", 5.0)
    return OpenAIProvider("gpt-5.5", base_url=url, compatible=False, api_key="sk-test", **kw)


def _make_anthropic(url: str, **kw: Any) -> AnthropicProvider:
    kw.setdefault("retry", FAST)
    kw.setdefault("timeout_s", 5.0)
    return AnthropicProvider("claude-sonnet-4-6", base_url=url, api_key="ak-test", **kw)


KITS = {
    "openai": Kit(
        "openai",
        _make_openai,
        lambda text, i=10, o=5: openai_reply(text, prompt_tokens=i, completion_tokens=o),
        openai_error,
    ),
    "anthropic": Kit(
        "anthropic",
        _make_anthropic,
        lambda text, i=10, o=5: anthropic_reply(text, input_tokens=i, output_tokens=o),
        anthropic_error,
    ),
}


@pytest.fixture(params=["openai", "anthropic"])
def kit(request: pytest.FixtureRequest) -> Kit:
    return KITS[request.param]


@pytest.fixture
def server(kit: Kit) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(kit.kind) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


# ---- success paths ----


def test_openai_success_sends_model_messages_and_key_and_prices_the_call() -> None:
    with FakeLLMServer("openai") as srv:
        srv.answer(
            200, openai_reply("```python\nx = 1\n```", prompt_tokens=1000, completion_tokens=200)
        )
        provider = _make_openai(srv.base_url)
        done = provider.complete(HELLO, system="you write Triton", max_tokens=321, stop=["###"])
    assert done.text == "```python\nx = 1\n```"
    assert (done.provider, done.model, done.attempts) == ("openai", "gpt-5.5", 1)
    assert done.raw_finish_reason == "stop" and not done.truncated
    assert (done.usage.input_tokens, done.usage.output_tokens) == (1000, 200)
    assert done.usage.cost_usd == pytest.approx((1000 * 5.00 + 200 * 30.00) / 1e6)
    [req] = srv.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-test"
    assert req.json["model"] == "gpt-5.5"
    assert req.json["messages"] == [
        {"role": "system", "content": "you write Triton"},
        {"role": "user", "content": "write a kernel"},
    ]
    assert req.json["max_completion_tokens"] == 321 and "max_tokens" not in req.json
    assert req.json["stop"] == ["###"]
    assert "temperature" not in req.json  # gpt-5.5 is a reasoning model


def test_openai_sends_temperature_to_models_that_take_it() -> None:
    with FakeLLMServer("openai") as srv:
        srv.answer(200, openai_reply("ok", model="gpt-4.1"))
        provider = OpenAIProvider(
            "gpt-4.1", base_url=srv.base_url, compatible=False, api_key="k", retry=FAST
        )
        provider.complete(HELLO, temperature=0.7)
    assert srv.requests[0].json["temperature"] == 0.7


def test_openai_compatible_server_gets_max_tokens_placeholder_key_and_no_price() -> None:
    with FakeLLMServer("openai") as srv:
        srv.answer(200, openai_reply("hi", model="qwen3-coder", completion_tokens=7))
        provider = make_provider(
            f"openai-compatible:{srv.base_url}#qwen3-coder",
            retry=FAST,
            env={"OPENAI_API_KEY": "sk-real-openai-key"},
        )
        done = provider.complete(HELLO, max_tokens=64, temperature=0.3)
    assert done.provider == "openai-compatible" and done.model == "qwen3-coder"
    assert done.usage.cost_usd is None
    req = srv.requests[0].json
    assert req["max_tokens"] == 64 and req["temperature"] == 0.3
    assert "max_completion_tokens" not in req
    # the real OpenAI key never travels to another host
    assert srv.requests[0].headers["authorization"] == "Bearer not-needed"


def test_openai_compatible_url_without_path_gets_v1() -> None:
    with FakeLLMServer("openai") as srv:
        srv.answer(200, openai_reply("hi"))
        root = srv.base_url.removesuffix("/v1")
        provider = make_provider(f"openai-compatible:{root}#m", retry=FAST, env={})
        assert provider.complete(HELLO).text == "hi"
    assert srv.requests[0].path == "/v1/chat/completions"


def test_openai_compatible_server_without_usage_is_estimated() -> None:
    body = openai_reply("abcdefgh")
    del body["usage"]
    with FakeLLMServer("openai") as srv:
        srv.answer(200, body)
        provider = OpenAIProvider("m", base_url=srv.base_url, retry=FAST, env={})
        done = provider.complete([Message(role="user", content="x" * 40)])
    assert done.usage.estimated
    assert (done.usage.input_tokens, done.usage.output_tokens) == (10, 2)


def test_anthropic_success_sends_system_top_level_and_prices_the_call() -> None:
    with FakeLLMServer("anthropic") as srv:
        srv.answer(200, anthropic_reply("done", input_tokens=2000, output_tokens=300))
        provider = _make_anthropic(srv.base_url)
        messages = [
            Message(role="system", content="be terse"),
            Message(role="user", content="write a kernel"),
            Message(role="assistant", content="which op?"),
            Message(role="user", content="softmax"),
        ]
        done = provider.complete(messages, system="you write Triton", max_tokens=777, stop=["##"])
    assert (done.text, done.provider, done.model) == ("done", "anthropic", "claude-sonnet-4-6")
    assert done.raw_finish_reason == "end_turn"
    assert (done.usage.input_tokens, done.usage.output_tokens) == (2000, 300)
    assert done.usage.cost_usd == pytest.approx((2000 * 3.00 + 300 * 15.00) / 1e6)
    [req] = srv.requests
    assert req.path == "/v1/messages"
    assert req.headers["authorization"] == "Bearer ak-test"
    assert "anthropic-version" in req.headers
    assert req.json["model"] == "claude-sonnet-4-6"
    assert req.json["max_tokens"] == 777
    assert req.json["system"] == "you write Triton\n\nbe terse"
    assert [m["role"] for m in req.json["messages"]] == ["user", "assistant", "user"]
    assert req.json["messages"][-1]["content"] == "softmax"
    assert req.json["stop_sequences"] == ["##"]
    assert "temperature" not in req.json


def test_anthropic_truncated_reply_is_flagged() -> None:
    with FakeLLMServer("anthropic") as srv:
        srv.answer(200, anthropic_reply("```python\ndef f(", stop_reason="max_tokens"))
        done = _make_anthropic(srv.base_url).complete(HELLO)
    assert done.truncated


# ---- retries, both wire formats ----


def test_rate_limit_then_success_honours_retry_after(kit: Kit, server: FakeLLMServer) -> None:
    server.answer(429, kit.error("slow down"), headers={"retry-after": "0.3"})
    server.answer(200, kit.ok("fine"))
    started = time.monotonic()
    done = kit.make(server.base_url).complete(HELLO)
    elapsed = time.monotonic() - started
    assert done.text == "fine" and done.attempts == 2
    assert len(server.requests) == 2
    assert elapsed >= 0.3  # base_s is 0.01: only retry-after explains the wait
    assert done.latency_s >= 0.3


def test_retry_after_is_capped(kit: Kit, server: FakeLLMServer) -> None:
    server.answer(429, kit.error("slow down"), headers={"retry-after": "120"})
    server.answer(200, kit.ok("fine"))
    policy = RetryPolicy(attempts=2, base_s=0.01, max_s=0.02, retry_after_cap_s=0.05)
    started = time.monotonic()
    assert kit.make(server.base_url, retry=policy).complete(HELLO).text == "fine"
    assert time.monotonic() - started < 3.0


def test_two_server_errors_then_success(kit: Kit, server: FakeLLMServer) -> None:
    server.answer(500, kit.error("boom"))
    server.answer(503, kit.error("busy"))
    server.answer(200, kit.ok("third time"))
    done = kit.make(server.base_url).complete(HELLO)
    assert done.text == "third time" and done.attempts == 3
    assert len(server.requests) == 3


def test_anthropic_overloaded_529_is_retried() -> None:
    with FakeLLMServer("anthropic") as srv:
        srv.answer(529, anthropic_error("Overloaded", type_="overloaded_error"))
        srv.answer(200, anthropic_reply("ok"))
        assert _make_anthropic(srv.base_url).complete(HELLO).attempts == 2


def test_persistent_server_error_gives_up_after_n_attempts(kit: Kit, server: FakeLLMServer) -> None:
    for _ in range(3):
        server.answer(500, kit.error("still broken"))
    with pytest.raises(LLMRetryableError, match="gave up after 3 attempts") as caught:
        kit.make(server.base_url).complete(HELLO)
    assert caught.value.status == 500
    assert "still broken" in str(caught.value)
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (401, "KEY"),
        (400, "rejected"),
        (403, "no access"),
        (404, "model name"),
    ],
)
def test_client_errors_are_fatal_without_retry(
    kit: Kit, server: FakeLLMServer, status: int, words: str
) -> None:
    server.answer(status, kit.error("nope"))
    with pytest.raises(LLMFatalError, match=words) as caught:
        kit.make(server.base_url).complete(HELLO)
    assert caught.value.status == status
    assert "nope" in str(caught.value)
    assert len(server.requests) == 1


def test_401_names_the_key_variable(kit: Kit, server: FakeLLMServer) -> None:
    server.answer(401, kit.error("invalid x-api-key"))
    key_env = "OPENAI_API_KEY" if kit.kind == "openai" else "ANTHROPIC_API_KEY"
    with pytest.raises(LLMFatalError, match=f"set {key_env}"):
        kit.make(server.base_url).complete(HELLO)


def test_openai_insufficient_quota_is_fatal() -> None:
    with FakeLLMServer("openai") as srv:
        srv.answer(
            429, openai_error("quota", type_="insufficient_quota", code="insufficient_quota")
        )
        with pytest.raises(LLMFatalError, match="no credit"):
            _make_openai(srv.base_url).complete(HELLO)
    assert len(srv.requests) == 1


def test_connection_refused_is_retried_then_raised(kit: Kit) -> None:
    root = f"http://127.0.0.1:{closed_port()}"
    url = root + "/v1" if kit.kind == "openai" else root
    with pytest.raises(
        LLMRetryableError, match="gave up after 3 attempts; last error: .*cannot connect"
    ):
        kit.make(url).complete(HELLO)


def test_timeout_is_retried(kit: Kit, server: FakeLLMServer) -> None:
    server.answer(200, kit.ok("too late"), delay_s=1.0)
    server.answer(200, kit.ok("in time"))
    done = kit.make(server.base_url, timeout_s=0.25).complete(HELLO)
    assert done.text == "in time" and done.attempts == 2
    assert len(server.requests) == 2


def test_persistent_timeout_says_so(kit: Kit, server: FakeLLMServer) -> None:
    for _ in range(2):
        server.answer(200, kit.ok("too late"), delay_s=0.8)
    policy = RetryPolicy(attempts=2, base_s=0.01, max_s=0.02)
    with pytest.raises(LLMRetryableError, match="no complete answer within the 0.2 s deadline"):
        kit.make(server.base_url, timeout_s=0.2, retry=policy).complete(HELLO)


# ---- keys, limiter ----


def test_missing_keys_are_fatal_with_advice() -> None:
    with pytest.raises(LLMFatalError, match="OPENAI_API_KEY is not set.*offline"):
        OpenAIProvider("gpt-5.5", env={})
    with pytest.raises(LLMFatalError, match="ANTHROPIC_API_KEY is not set"):
        AnthropicProvider("claude-sonnet-4-6", env={})


def test_keys_come_from_the_environment() -> None:
    with FakeLLMServer("anthropic") as srv:
        srv.answer(200, anthropic_reply("ok"))
        provider = AnthropicProvider(
            "claude-sonnet-4-6", base_url=srv.base_url, env={"ANTHROPIC_API_KEY": "from-env"}
        )
        provider.complete(HELLO)
    assert srv.requests[0].headers["authorization"] == "Bearer from-env"


def test_limiter_spaces_requests_across_threads() -> None:
    limiter = RateLimiter(max_concurrent=2, requests_per_minute=2, period_s=0.4)
    with FakeLLMServer("openai") as srv:
        for _ in range(3):
            srv.answer(200, openai_reply("ok"))
        provider = _make_openai(srv.base_url, limiter=limiter)
        started = time.monotonic()
        threads = [threading.Thread(target=provider.complete, args=(HELLO,)) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
    assert len(srv.requests) == 3
    assert elapsed >= 0.4  # the third request waited for the window to slide


# ---- retry-after parsing ----


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"Retry-After": "0.5"}) == 0.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
