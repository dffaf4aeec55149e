"""The replay provider: scripted replies served in order, by match and by node, and exhaustion."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from agents.core.llm import LLMFatalError, Message, make_provider
from agents.core.llm.replay import ReplayProvider


def _user(text: str) -> list[Message]:
    return [Message(role="user", content=text)]


def _write(tmp_path: Path, entries: list, name: str = "script.json") -> Path:
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    else:
        path.write_text(json.dumps(entries))
    return path


def test_plain_entries_are_served_in_order(tmp_path: Path) -> None:
    provider = ReplayProvider(_write(tmp_path, [{"text": "one"}, "two", {"text": "three"}]))
    assert [provider.complete(_user("go")).text for _ in range(3)] == ["one", "two", "three"]
    assert provider.served == [0, 1, 2] and provider.remaining == 0


def test_replies_are_labelled_scripted_with_estimated_usage_and_zero_cost(tmp_path: Path) -> None:
    provider = ReplayProvider(_write(tmp_path, [{"text": "x" * 41}]))
    done = provider.complete(_user("y" * 8), system="z" * 4)
    assert done.scripted and done.provider == "replay"
    assert done.model == "scripted:script.json"
    assert done.usage.estimated and done.usage.cost_usd == 0.0
    assert (done.usage.input_tokens, done.usage.output_tokens) == (3, 11)


def test_match_picks_the_first_fitting_entry(tmp_path: Path) -> None:
    script = [
        {"text": "repair", "match": "error"},
        {"text": "first plain"},
        {"text": "optimize", "match": "roofline"},
    ]
    provider = ReplayProvider(_write(tmp_path, script))
    assert provider.complete(_user("the roofline says 40%")).text == "first plain"
    assert provider.complete(_user("the roofline says 40%")).text == "optimize"
    assert provider.complete(_user("compile error: bad mask")).text == "repair"


def test_a_list_match_needs_every_substring(tmp_path: Path) -> None:
    script = [
        {"text": "slot 2 of task A", "match": ["## Task A (", "candidate 2 of"]},
        {"text": "task A", "match": ["## Task A ("]},
    ]
    provider = ReplayProvider(_write(tmp_path, script))
    assert provider.complete(_user("## Task A (x)\nwrite it")).text == "task A"
    assert provider.complete(_user("## Task A (x)\ncandidate 2 of 2")).text == "slot 2 of task A"


def test_match_looks_at_the_last_user_message_and_the_system_prompt(tmp_path: Path) -> None:
    provider = ReplayProvider(
        _write(tmp_path, [{"text": "sys", "match": "REFLECT"}, {"text": "late", "match": "now"}])
    )
    history = [
        Message(role="user", content="now"),
        Message(role="assistant", content="ok"),
        Message(role="user", content="and then"),
    ]
    with pytest.raises(LLMFatalError, match="no replay entry fits"):
        provider.complete(history)  # "now" is only in an earlier user message
    assert provider.complete(history, system="you REFLECT on failures").text == "sys"


def test_node_restricts_an_entry_to_one_graph_node(tmp_path: Path) -> None:
    script = [{"text": "diagnosis", "node": "reflector"}, {"text": "kernel", "node": "generator"}]
    provider = ReplayProvider(_write(tmp_path, script, "script.jsonl"))
    assert provider.complete(_user("go"), node="generator").text == "kernel"
    assert provider.complete(_user("go"), node="reflector").text == "diagnosis"


def test_exhaustion_is_a_clear_fatal_error(tmp_path: Path) -> None:
    path = _write(tmp_path, ["only"])
    provider = ReplayProvider(path)
    provider.complete(_user("go"))
    with pytest.raises(LLMFatalError, match=r"replay script exhausted after 1 responses \(file "):
        provider.complete(_user("go"))


def test_no_fitting_entry_lists_what_remains(tmp_path: Path) -> None:
    provider = ReplayProvider(
        _write(tmp_path, [{"text": "a", "match": "zzz", "node": "optimizer"}])
    )
    with pytest.raises(LLMFatalError, match=r"1 unused entries remain.*node='optimizer'"):
        provider.complete(_user("go"), node="generator")


def test_jsonl_skips_blank_and_comment_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('// a demo script\n{"text": "a"}\n\n"b"\n')
    provider = ReplayProvider(path)
    assert [provider.complete(_user("go")).text for _ in range(2)] == ["a", "b"]


def test_resume_skips_entries_already_served(tmp_path: Path) -> None:
    provider = ReplayProvider(_write(tmp_path, ["a", "b", "c"]), already_served=[0, 1])
    assert provider.complete(_user("go")).text == "c"


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"text": "a"}', "expected a JSON list"),
        ('[{"txt": "a"}]', r"entry 0: unknown field\(s\) \['txt'\]"),
        ('[{"match": "a"}]', "entry 0: field 'text' is required"),
        ('[{"text": "a", "match": ["b", 1]}]', "entry 0: field 'match' must be a string or a list"),
        ('["a", 3]', "entry 1: expected an object or a string"),
        ("[", "not JSON"),
    ],
)
def test_bad_scripts_name_the_file_and_entry(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(LLMFatalError, match=words):
        ReplayProvider(path)


def test_missing_script_file(tmp_path: Path) -> None:
    with pytest.raises(LLMFatalError, match="does not exist"):
        ReplayProvider(tmp_path / "nope.json")


def test_parallel_calls_never_serve_an_entry_twice(tmp_path: Path) -> None:
    provider = ReplayProvider(_write(tmp_path, [str(i) for i in range(40)]))
    texts: list[str] = []
    lock = threading.Lock()

    def call() -> None:
        text = provider.complete(_user("go")).text
        with lock:
            texts.append(text)

    threads = [threading.Thread(target=call) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(texts, key=int) == [str(i) for i in range(40)]


def test_factory_builds_replay_and_ignores_network_options(tmp_path: Path) -> None:
    path = _write(tmp_path, ["hi"])
    provider = make_provider(f"replay:{path}", timeout_s=3.0, api_key="k")
    assert isinstance(provider, ReplayProvider)
    assert provider.complete(_user("go")).text == "hi"
