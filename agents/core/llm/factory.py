"""From an `--llm` spec to a provider.

Accepted specs:

    offline                       no model: returns None. The agent then runs its offline policy
                                  (knowledge-base retrieval + measured config search + rule-based
                                  diagnosis), which lives in the agent, not here.
    openai:MODEL                  OpenAI chat completions (needs OPENAI_API_KEY)
    anthropic:MODEL               Anthropic messages (needs ANTHROPIC_API_KEY)
    openai-compatible:URL#MODEL   any OpenAI-compatible server, e.g.
                                  openai-compatible:http://127.0.0.1:8000/v1#qwen3-coder
                                  (a URL with no path gets /v1 appended)
    replay:FILE                   scripted replies from a JSON/JSONL file (see replay.py)

`default_spec(env)` is what `--llm` means when it is not given: an API provider when its key is
set (OpenAI first), else `offline`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from agents.core.llm.anthropic_provider import AnthropicProvider
from agents.core.llm.base import Provider
from agents.core.llm.openai_provider import OpenAIProvider
from agents.core.llm.replay import ReplayProvider

DEFAULT_OPENAI_MODEL = "gpt-5.5"
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6"

ACCEPTED_SPECS = (
    "offline",
    "openai:MODEL",
    "anthropic:MODEL",
    "openai-compatible:URL#MODEL",
    "replay:FILE",
)

# Options that only network providers take; the replay provider talks to no network.
NETWORK_OPTIONS = frozenset(
    {
        "api_key",
        "base_url",
        "timeout_s",
        "max_body_bytes",
        "retry",
        "limiter",
        "env",
        "send_temperature",
        "compatible",
    }
)


def _bad(spec: str, why: str) -> ValueError:
    forms = ", ".join(ACCEPTED_SPECS)
    return ValueError(f"bad --llm spec {spec!r}: {why}. Accepted forms: {forms}")


def make_provider(spec: str, **kwargs: Any) -> Provider | None:
    """Build the provider `spec` names; `offline` gives None (the agent's offline policy).

    `kwargs` go to the provider's constructor (timeout_s, retry, limiter, api_key, env, ...).
    For `replay:` the network-only options in NETWORK_OPTIONS are dropped, so one set of
    settings can be passed whatever the spec.
    """
    spec = spec.strip()
    if spec == "offline":
        return None
    kind, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise _bad(spec, "expected KIND:VALUE or 'offline'")
    if kind == "openai":
        return OpenAIProvider(rest, **kwargs)
    if kind == "anthropic":
        return AnthropicProvider(rest, **kwargs)
    if kind == "openai-compatible":
        url, hash_, model = rest.rpartition("#")
        if not hash_ or not url or not model:
            raise _bad(spec, "expected openai-compatible:URL#MODEL, with both parts")
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise _bad(spec, f"{url!r} is not an http(s) URL")
        if parsed.path in ("", "/"):
            url = url.rstrip("/") + "/v1"
        return OpenAIProvider(model, base_url=url, **kwargs)
    if kind == "replay":
        options = {k: v for k, v in kwargs.items() if k not in NETWORK_OPTIONS}
        return ReplayProvider(rest, **options)
    raise _bad(spec, f"unknown provider {kind!r}")


def default_spec(env: Mapping[str, str] | None = None) -> str:
    """`openai:<default>` if OPENAI_API_KEY is set, else `anthropic:<default>` if
    ANTHROPIC_API_KEY is set, else `offline`."""
    env = os.environ if env is None else env
    if env.get("OPENAI_API_KEY"):
        return f"openai:{DEFAULT_OPENAI_MODEL}"
    if env.get("ANTHROPIC_API_KEY"):
        return f"anthropic:{DEFAULT_ANTHROPIC_MODEL}"
    return "offline"
