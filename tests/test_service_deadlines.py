"""Deadlines on the services a run waits for besides the model (tests/test_llm_faults.py): a
chroma server that accepts and never answers, an `ncu` that never ends, a candidate that spins
for ever under the judge's `judge.timeout`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from llm_servers import FrozenServer

from agents import api
from agents.core.llm import BudgetTracker
from agents.core.nodes.retrieve import search_kb

ROOT = Path(__file__).resolve().parents[1]


def test_a_frozen_knowledge_base_server_is_a_counted_message_within_its_deadline() -> None:
    """Before: a frozen chroma server blocked a run 285 s without a word."""
    import chromadb  # noqa: F401 (imported before the clock starts: the deadline is per request)

    from knowledge_base.retrieve import KnowledgeBase

    events: list[tuple[str, dict[str, Any]]] = []
    notes: list[str] = []
    tracker = BudgetTracker()
    with FrozenServer() as frozen:
        ctx = SimpleNamespace(
            config=SimpleNamespace(kb="auto", benchmark=False),
            task=SimpleNamespace(id="softmax_fp32"),
            open_kb=lambda: KnowledgeBase(url=frozen.url, request_timeout_s=1.0),
            tracker=tracker,
            event=lambda kind, **fields: events.append((kind, fields)),
            progress=SimpleNamespace(
                note=lambda text, style=None: notes.append(text), step=lambda text: None
            ),
        )
        started = time.monotonic()
        knowledge, kernels, note = search_kb(ctx)  # type: ignore[arg-type]
        took = time.monotonic() - started
        assert frozen.accepted >= 2
    assert knowledge == kernels == []
    assert note.startswith(f"knowledge base unavailable (the chroma server at {frozen.url} did")
    assert "within 1 s (kb.timeout)); continuing without it" in note
    assert took < 2 * 1.0 + 3, took
    assert [(k, f["attempt"], f["retrying"]) for k, f in events] == [
        ("service_stalled", 1, True),
        ("service_stalled", 2, False),
    ]
    assert tracker.faults == {"kb_stalled": 2} and "trying once more" in notes[0]


def test_ncu_past_its_deadline_is_killed_with_everything_under_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An `ncu` whose profiled program hangs, and which holds the output pipes from a child: the
    whole process group goes at the deadline (subprocess.run would have waited for the child)."""
    from profiling import NcuTimeout, run_ncu

    pid_file = tmp_path / "child.pid"
    fake = tmp_path / "ncu"
    fake.write_text(f"#!/bin/sh\nsleep 600 &\necho $! > {pid_file}\nsleep 600\n")
    fake.chmod(0o755)
    monkeypatch.setenv("KERNFORGE_NCU", str(fake))
    started = time.monotonic()
    with pytest.raises(NcuTimeout, match="past its 1 s deadline"):
        run_ncu(["python", "-c", "pass"], "k", timeout_s=1.0)
    assert time.monotonic() - started < 8
    child = Path(f"/proc/{int(pid_file.read_text())}/status")
    for _ in range(50):  # gone, or a zombie its new parent has not reaped yet
        if not child.exists() or "\nState:\tZ" in child.read_text():
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the child ncu left behind still runs: {child.read_text()[:200]}")


def test_a_candidate_that_spins_for_ever_is_killed_at_judge_timeout(tmp_path: Path) -> None:
    """judge.timeout reaches the judge: the whole candidate process has that long (300 s by
    default); the attempt is a `timeout` verdict, and the run goes on."""
    spin = (ROOT / "tests" / "hostile" / "infinite_loop.py").read_text()
    script = tmp_path / "spin.jsonl"
    script.write_text(json.dumps({"text": f"```python\n{spin}```"}) + "\n")
    result = api.run(
        "softmax_fp32",
        llm=f"replay:{script}",
        device="cpu",
        runs_dir=tmp_path,
        budget="iterations=1",
        settings={
            "kb": "off",
            "judge.trials": 1,
            "agent.candidates": 1,
            "agent.reflect": False,
            "judge.timeout": 4.0,
        },
        run_id="spin",
        quiet=True,
    )
    verdict = json.loads((result.run_dir / "attempts" / "1" / "verdict.json").read_text())
    assert verdict["error_class"] == "timeout" and "past the 4 s limit" in verdict["message"]
    # the 4 s count from the job's start; the worker's own start-up (a cold one) comes on top
    assert 4.0 <= verdict["stage_seconds"]["total"] < 4.0 + 30.0
    assert result.finished and result.best_kernel is None
