"""`--llm` spec parsing and the default when no spec is given."""

from __future__ import annotations

import pytest

from agents.core.llm import default_spec, make_provider
from agents.core.llm.anthropic_provider import AnthropicProvider
from agents.core.llm.factory import DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL
from agents.core.llm.openai_provider import OpenAIProvider

KEYS = {"OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": "ak-x"}


def test_offline_gives_no_provider() -> None:
    assert make_provider("offline") is None
    assert make_provider("  offline ") is None


def test_openai_spec() -> None:
    provider = make_provider("openai:gpt-5.4-mini", env=KEYS)
    assert isinstance(provider, OpenAIProvider)
    assert (provider.name, provider.model, provider.compatible) == ("openai", "gpt-5.4-mini", False)
    assert provider.describe() == "openai:gpt-5.4-mini"


def test_anthropic_spec() -> None:
    provider = make_provider("anthropic:claude-haiku-4-5", env=KEYS)
    assert isinstance(provider, AnthropicProvider)
    assert provider.model == "claude-haiku-4-5"


def test_openai_compatible_spec_splits_url_and_model() -> None:
    provider = make_provider("openai-compatible:http://gpu-box:8000/v1#Qwen/Qwen3-Coder", env={})
    assert isinstance(provider, OpenAIProvider)
    assert provider.compatible and provider.name == "openai-compatible"
    assert provider.base_url == "http://gpu-box:8000/v1"
    assert provider.model == "Qwen/Qwen3-Coder"


def test_openai_compatible_url_without_path_gets_v1() -> None:
    provider = make_provider("openai-compatible:http://localhost:11434/#llama3", env={})
    assert provider.base_url == "http://localhost:11434/v1"


@pytest.mark.parametrize(
    "spec",
    [
        "",
        "gpt-5.5",
        "openai:",
        "mistral:large",
        "openai-compatible:http://host:8000/v1",
        "openai-compatible:http://host:8000/v1#",
        "openai-compatible:host:8000#model",
        "replay:",
    ],
)
def test_bad_specs_list_the_accepted_forms(spec: str) -> None:
    with pytest.raises(ValueError, match="Accepted forms: offline, openai:MODEL") as caught:
        make_provider(spec, env=KEYS)
    assert "openai-compatible:URL#MODEL" in str(caught.value)
    assert "replay:FILE" in str(caught.value)


def test_default_spec_is_offline_without_keys() -> None:
    assert default_spec({}) == "offline"
    assert default_spec({"OPENAI_API_KEY": ""}) == "offline"


def test_default_spec_picks_a_provider_whose_key_is_set() -> None:
    assert default_spec({"OPENAI_API_KEY": "k"}) == f"openai:{DEFAULT_OPENAI_MODEL}"
    assert default_spec({"ANTHROPIC_API_KEY": "k"}) == f"anthropic:{DEFAULT_ANTHROPIC_MODEL}"
    assert default_spec(KEYS).startswith("openai:")


def test_default_spec_always_parses() -> None:
    for env in ({}, {"OPENAI_API_KEY": "k"}, {"ANTHROPIC_API_KEY": "k"}):
        spec = default_spec(env)
        provider = make_provider(spec, env=env)
        assert (provider is None) == (spec == "offline")
