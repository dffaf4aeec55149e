"""A model server that stalls or answers garbage, and budgets that must hold, against real
servers on 127.0.0.1 (tests/llm_servers.py): a server that drips one byte at a time, sends
HTML, cut or shapeless JSON, or a reply of megabytes; a run killed with SIGKILL while a model
call is in flight. (The other services' deadlines: tests/test_service_deadlines.py.)
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llm_servers import (
    Answer,
    FakeLLMServer,
    ReceivedRequest,
    anthropic_reply,
    openai_reply,
)

from agents import api
from agents.core.llm import (
    Budget,
    BudgetExceeded,
    BudgetTracker,
    FailedAttempt,
    Message,
    RetryPolicy,
)
from agents.core.llm.anthropic_provider import AnthropicProvider
from agents.core.llm.openai_provider import OpenAIProvider

ROOT = Path(__file__).resolve().parents[1]
HELLO = [Message(role="user", content="write a kernel")]
FAST = {"kb": "off", "judge.trials": 1, "agent.candidates": 1}
NO_CODE = "I would rather not write code today."


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(key, raising=False)


def _provider(kind: str, url: str, **kw: Any) -> OpenAIProvider | AnthropicProvider:
    kw.setdefault("retry", RetryPolicy(attempts=2, base_s=0.01, max_s=0.02))
    if kind == "openai":
        return OpenAIProvider("gpt-5.5", base_url=url, compatible=False, api_key="sk-t", **kw)
    return AnthropicProvider("claude-sonnet-4-6", base_url=url, api_key="ak-t", **kw)


def _ok(kind: str, text: str) -> dict[str, Any]:
    return openai_reply(text) if kind == "openai" else anthropic_reply(text)


def _events(run_dir: Path, kind: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    return [r for r in rows if r["event"] == kind]


def _budget(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "budget.json").read_text())


def _model_like(text: str = NO_CODE, seen: list[dict[str, Any]] | None = None) -> Callable:
    """Answers like a model that always fills its reply cap: input counted at len/4 (below the
    agent's estimate, as real tokenizers are), output = the request's max_tokens."""

    def answer(request: ReceivedRequest) -> Answer:
        body = request.json
        chars = sum(len(m["content"]) for m in body["messages"])
        cap = body.get("max_tokens") or body.get("max_completion_tokens")
        usage = {"in": math.ceil(chars / 4), "out": cap, "max_tokens": cap}
        if seen is not None:
            seen.append(usage)
        reply = openai_reply(text, prompt_tokens=usage["in"], completion_tokens=usage["out"])
        return Answer(200, reply)

    return answer


# ---- deadlines: a total per request, not a per-read timeout ----


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_drip_feeding_server_is_cut_at_the_deadline_and_the_retry_succeeds(kind: str) -> None:
    """One byte every 0.3 s never trips a per-read timeout (the SDK's own would wait ~2 min for
    this body); the total deadline cuts the request at 1.5 s and the retry gets the answer."""
    failures: list[tuple[float, FailedAttempt]] = []
    with FakeLLMServer(kind) as server:
        server.answer(200, _ok(kind, "too slow"), drip_s=0.3)
        server.answer(200, _ok(kind, "in time"))
        started = time.monotonic()
        done = _provider(kind, server.base_url, timeout_s=1.5).complete(
            HELLO, on_failure=lambda f: failures.append((time.monotonic() - started, f))
        )
    [(cut_at, failed)] = failures
    assert done.text == "in time" and done.attempts == 2
    assert failed.reason == "deadline" and failed.retry_in_s is not None
    assert "no complete answer within the 1.5 s deadline (llm.timeout)" in str(failed.error)
    assert 1.4 <= cut_at <= 2.5, f"cut at {cut_at:.2f} s, not at the 1.5 s deadline"


def test_a_drip_feeding_server_stops_a_run_at_the_deadline_with_a_message(tmp_path: Path) -> None:
    """llm.timeout and llm.attempts reach the run's provider: two cut requests, two counted
    faults, a `stopped` event, and the error that names the deadline."""
    with FakeLLMServer("openai") as server:
        server.respond_with(lambda _: Answer(200, openai_reply(NO_CODE), drip_s=0.5))
        started = time.monotonic()
        with pytest.raises(api.RunError) as caught:
            api.run(
                "softmax_fp32",
                llm=f"openai-compatible:{server.base_url}#m",
                device="cpu",
                runs_dir=tmp_path,
                settings={**FAST, "llm.timeout": 1.0, "llm.attempts": 2},
                run_id="drip",
                quiet=True,
            )
        took = time.monotonic() - started
    first = str(caught.value).splitlines()[0]
    assert "gave up after 2 attempts" in first and "within the 1 s deadline" in first
    assert took < 20, took
    run_dir = tmp_path / "drip"
    faults = _events(run_dir, "llm_fault")
    assert [f["reason"] for f in faults] == ["deadline", "deadline"]
    assert [f["retry_in_s"] is None for f in faults] == [False, True]
    assert _events(run_dir, "stopped")
    budget = _budget(run_dir)
    assert budget["faults"] == {"llm_deadline": 2}
    assert budget["used"]["failed_calls"] == 1 and budget["in_flight"] == []


# ---- malformed bodies are retried like a 5xx ----

MALFORMED = {
    "truncated": (b'{"id": "x", "choices": [{"message": {"content": "hal', "application/json"),
    "html": (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
    "not_an_object": (b'["a", "list"]', "application/json"),
    "wrong_shape": (b'{"id": "x", "choices": "none"}', "application/json"),
    "empty": (b"", "application/json"),
}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_body_is_retried_then_the_call_succeeds(kind: str, name: str) -> None:
    raw, content_type = MALFORMED[name]
    failures: list[FailedAttempt] = []
    with FakeLLMServer(kind) as server:
        server.answer(200, raw=raw, content_type=content_type)
        server.answer(200, _ok(kind, "fine now"))
        done = _provider(kind, server.base_url).complete(HELLO, on_failure=failures.append)
    assert done.text == "fine now" and done.attempts == 2
    [failed] = failures
    assert failed.reason == "malformed"
    assert f"malformed reply (HTTP 200, {len(raw)} bytes, {content_type})" in str(failed.error)


def test_a_body_over_the_size_cap_is_not_read_and_is_retried() -> None:
    failures: list[FailedAttempt] = []
    with FakeLLMServer("openai") as server:
        server.answer(200, openai_reply("x" * 50_000))
        server.answer(200, openai_reply("short"))
        provider = _provider("openai", server.base_url, max_body_bytes=4096)
        done = provider.complete(HELLO, on_failure=failures.append)
    assert done.text == "short"
    assert [f.reason for f in failures] == ["malformed"]
    assert "longer than 4096 bytes (llm.body_bytes)" in str(failures[0].error)


def test_malformed_replies_to_the_end_give_a_stopped_event_and_a_one_line_error(
    tmp_path: Path,
) -> None:
    """What `kernforge run` did before: `error: Expecting value: line 1 column 50`, exit 2, no
    `stopped` event. Now the call is retried, each bad body counted, and the run stops cleanly."""
    with FakeLLMServer("openai") as server:
        server.respond_with(lambda _: Answer(200, raw=b'{"choices": [{"message": '))
        with pytest.raises(api.RunError) as caught:
            api.run(
                "softmax_fp32",
                llm=f"openai-compatible:{server.base_url}#m",
                device="cpu",
                runs_dir=tmp_path,
                settings={**FAST, "llm.attempts": 3},
                run_id="garbage",
                quiet=True,
            )
    message = str(caught.value)
    first, hint = message.splitlines()
    assert first.startswith("the model call failed: gave up after 3 attempts; last error: ")
    assert "malformed reply (HTTP 200, 25 bytes, application/json): not JSON" in first
    run_dir = tmp_path / "garbage"
    assert hint.endswith(f"kernforge run --resume {run_dir}")
    [stopped] = _events(run_dir, "stopped")
    assert "malformed reply" in stopped["error"]
    assert [f["reason"] for f in _events(run_dir, "llm_fault")] == ["malformed"] * 3
    assert _budget(run_dir)["faults"] == {"llm_malformed": 3}


# ---- budgets that hold ----


def test_a_token_budget_caps_max_tokens_and_the_run_ends_within_it(tmp_path: Path) -> None:
    """Before: `--budget tokens=3000` stopped at 4800 (a call was made whenever something was
    left, with its full max_tokens). Now every request's max_tokens fits what is left."""
    seen: list[dict[str, Any]] = []
    with FakeLLMServer("openai") as server:
        server.respond_with(_model_like(seen=seen))
        result = api.run(
            "softmax_fp32",
            llm=f"openai-compatible:{server.base_url}#m",
            device="cpu",
            runs_dir=tmp_path,
            budget="tokens=3000",
            settings=FAST,
            run_id="tokens",
            quiet=True,
        )
    used = result.summary["budget"]["used"]
    assert result.reason.startswith("budget spent: tokens") and "not made" in result.reason
    assert used["tokens"] == sum(s["in"] + s["out"] for s in seen) <= 3000
    assert seen and seen[0]["max_tokens"] < 8192  # the first request was capped already
    calls = _events(result.run_dir, "llm_call")
    assert len(calls) == len(seen) and all(c["max_tokens_capped"] for c in calls)
    assert [c["max_tokens"] for c in calls] == [s["max_tokens"] for s in seen]
    assert used["overruns"] == 0 and _budget(result.run_dir)["in_flight"] == []


def test_a_cost_budget_holds_at_the_models_price(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: `cost=0.02` stopped at $0.030. gpt-5.5 at $5 / $30 per million tokens: the cap
    leaves room for a few hundred reply tokens, and no call that could pass $0.02 is made."""
    seen: list[dict[str, Any]] = []
    with FakeLLMServer("openai") as server:
        server.respond_with(_model_like(seen=seen))
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-cost")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = api.run(
            "softmax_fp32",
            llm="openai:gpt-5.5",
            device="cpu",
            runs_dir=tmp_path,
            budget="cost=0.02",
            settings=FAST,
            run_id="cost",
            quiet=True,
        )
    used = result.summary["budget"]["used"]
    paid = sum(s["in"] * 5e-6 + s["out"] * 30e-6 for s in seen)
    assert result.reason.startswith("budget spent: cost_usd")
    assert seen and all(s["max_tokens"] < 8192 for s in seen)
    assert used["cost_usd"] == pytest.approx(paid) and paid <= 0.02
    assert not used["cost_is_lower_bound"]


def test_a_call_that_cannot_fit_waits_for_calls_in_flight_then_is_refused() -> None:
    """Two parallel slots: the second reservation does not take what the first one holds."""
    tracker = BudgetTracker(Budget(max_tokens=1000))
    first = tracker.reserve("generator", ["x" * 1200], max_tokens=8192, price=None)
    assert first.max_tokens == 1000 - first.input_tokens
    threading.Timer(0.3, lambda: tracker.release(first)).start()
    started = time.monotonic()
    with pytest.raises(BudgetExceeded, match="not made"):
        tracker.reserve("generator", ["y" * 3000], max_tokens=8192, price=None)
    assert time.monotonic() - started >= 0.25  # it waited for the first call to end
    assert tracker.failed_calls == 1 and tracker.in_flight == []


# ---- kill -9 during a model call ----


def test_kill_9_during_a_model_call_then_resume_counts_every_call(tmp_path: Path) -> None:
    """The issue: after a kill during a call and a resume, budget.json counted 1 call while the
    server had answered 3. The reservation is on disk before the request leaves, so the call in
    flight at the kill counts (at its reservation), and every answered call counts."""
    seen: list[dict[str, Any]] = []
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    with FakeLLMServer("openai") as server:
        server.respond_with(_model_like(seen=seen))
        released = threading.Event()
        server.hold_while(lambda: len(server.requests) >= 2 and not released.is_set())
        proc = subprocess.Popen(
            [sys.executable, "-m", "agents.cli.main", "run", "--task", "softmax_fp32"]
            + ["--llm", f"openai-compatible:{server.base_url}#m", "--device", "cpu"]
            + ["--candidates", "1", "--kb", "off", "--iterations", "1"]
            + ["--runs-dir", str(tmp_path), "--run-id", "killed"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while server.held < 1:  # the third request is in flight, held by the server
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
            assert time.monotonic() < deadline, "the third model call never came"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        released.set()  # the server answers the held call, to a dead socket
        while len(server.requests) < 3:
            time.sleep(0.02)
        run_dir = tmp_path / "killed"
        on_disk = _budget(run_dir)
        assert on_disk["used"]["calls"] == 2 and len(on_disk["in_flight"]) == 1
        [lost] = on_disk["in_flight"]

        # resumed in this process: one interpreter start fewer (the kill needed its own)
        resumed = api.resume("killed", runs_dir=tmp_path, quiet=True)
        answered = len(server.requests)
    assert resumed.finished and resumed.best_kernel is None  # every reply had no code
    used = _budget(run_dir)["used"]
    assert answered == 6 and used["calls"] == answered and used["interrupted_calls"] == 1
    settled = [s for i, s in enumerate(seen) if i != 2]  # the third was answered to a dead socket
    reported = sum(s["in"] + s["out"] for s in settled)
    assert used["tokens"] == reported + lost["input_tokens"] + lost["max_tokens"]
    [resume] = _events(run_dir, "resume")
    assert resume["spend"].startswith("1 model call(s) were in flight when the run stopped")


# ---- sizes ----


def test_an_oversize_reply_is_cut_in_the_run_and_in_the_next_prompt(tmp_path: Path) -> None:
    """Before: a 3 MB reply with code made a 15 MB run directory (a 20 MB one 121 MB), and a
    3 MB reply without code went back whole in the next request. Now 100 000 characters of a
    reply are kept and 12 000 quoted back, each cut said where it is made."""
    huge = "no code here, just words. " * 120_000  # 3.1 MB
    # a kernel the static check refuses at once (torch.softmax), then 3 MB of padding
    code = (ROOT / "tests" / "fixtures" / "agent" / "kernels" / "softmax_torch.py").read_text()
    padded = f"```python\n{code}```\n" + "padding after the code. " * 125_000
    with FakeLLMServer("openai") as server:
        server.answer(200, openai_reply(huge))
        server.answer(200, openai_reply(padded))
        result = api.run(
            "softmax_fp32",
            llm=f"openai-compatible:{server.base_url}#m",
            device="cpu",
            runs_dir=tmp_path,
            budget="iterations=1",
            settings={**FAST, "agent.nocode_retries": 1, "agent.reflect": False},
            run_id="huge",
            quiet=True,
        )
        second = server.requests[1].json["messages"]
    quoted, ask = second[-2], second[-1]
    assert quoted["role"] == "assistant" and len(quoted["content"]) < 12_200
    assert quoted["content"].endswith(
        f"[kernforge cut this quoted reply here: the first 12000 of its {len(huge)} characters "
        "are kept (agent.feedback_chars)]"
    )
    assert f"Your reply had {len(huge)} characters; only its first 12000" in ask["content"]
    first_call, second_call = _events(result.run_dir, "llm_call")
    assert first_call["reply_cut"] == {
        "kept": 100_000,
        "total": len(huge),
        "setting": "llm.reply_chars",
    }
    assert second_call["reply_cut"]["total"] == len(padded)
    [nocode] = _events(result.run_dir, "no_code")
    assert nocode["quoted_cut"]["kept"] == 12_000 and nocode["reply_chars"] == len(huge)
    attempt = result.run_dir / "attempts" / "1"
    assert (attempt / "code.py").read_text() == code  # the code before the cut is intact
    assert (attempt / "reply.md").stat().st_size < 2 * 100_300
    size = sum(p.stat().st_size for p in result.run_dir.rglob("*") if p.is_file())
    assert size < 2_000_000, f"the run directory holds {size} bytes"
