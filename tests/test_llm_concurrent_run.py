"""A run's parallel candidates call the model concurrently, no more at once than llm.concurrency
allows, and the budget still counts every token the server reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_servers import Answer, FakeLLMServer, openai_reply

from agents import api

NO_KEYS = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}


def test_candidates_are_asked_for_at_once_up_to_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three candidates, llm.concurrency 2: two requests overlap (the generator's slots run
    side by side), never three. The replies carry no code, so nothing is judged: the test is
    about the model calls only."""
    for key, value in NO_KEYS.items():
        monkeypatch.setenv(key, value)
    concurrency = 2
    reply = "I would rather not write this kernel."
    with FakeLLMServer("openai") as server:
        # every request is answered after 0.4 s, so requests that may overlap do
        server.respond_with(
            lambda _request: Answer(
                200, openai_reply(reply, prompt_tokens=1000, completion_tokens=700), {}, 0.4
            )
        )
        result = api.run(
            "softmax_fp32",
            llm=f"openai-compatible:{server.base_url}#concurrency-test",
            device="cpu",
            runs_dir=tmp_path,
            budget={"iterations": 1},
            settings={
                "agent.candidates": 3,
                "kb": "off",
                "judge.trials": 1,
                "llm.concurrency": concurrency,
            },
            quiet=True,
        )
        calls = len(server.requests)
        peak = server.peak_in_flight
    assert calls >= 3
    assert peak == concurrency  # never more than the limit, and the limit is used
    used = json.loads((result.run_dir / "budget.json").read_text())["used"]
    assert used["calls"] == calls  # every call counted, none twice, none lost to a race
    assert (used["input_tokens"], used["output_tokens"]) == (1000 * calls, 700 * calls)
