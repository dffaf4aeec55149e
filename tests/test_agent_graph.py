"""The whole graph on the CPU, with the real judge (Triton interpreter) and scripted models.

The CPU cannot time kernels, so the optimisation path is driven by the scripted measurer of
tests/fixtures/agent/scripted.py through the scripted_measure test seam (agents/core/seams.py); the runs
label those measurements scripted, and the tests check that they do.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fixtures.agent.scripted import always_gain, scripted_measure

from agents import api
from agents.core.seams import Seams

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "agent"
SOLUTION = (ROOT / "knowledge_base" / "kernels" / "softmax.py").read_text()
FAST = {"kb": "off", "judge.trials": 1}


def events(run_dir: Path, kind: str | None = None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    return [r for r in rows if kind is None or r["event"] == kind]


def attempt_json(run_dir: Path, i: int) -> dict[str, Any]:
    return json.loads((run_dir / "attempts" / str(i) / "attempt.json").read_text())


def test_replay_run_repairs_optimises_drops_out_and_feeds_back_a_reply_without_code(
    tmp_path: Path,
) -> None:
    result = api.run(
        "softmax_fp32",
        llm=f"replay:{FIXTURES / 'full_graph.jsonl'}",
        device="cpu",
        runs_dir=tmp_path,
        budget="iterations=5",
        settings={**FAST, "agent.candidates": 2, "dropout.after": 1},
        run_id="full",
        quiet=True,
        seams=Seams(scripted_measure=scripted_measure),
    )
    run = result.run_dir
    assert result.finished and result.reason == "iteration budget spent (5 of 5 rounds)"
    assert sorted(int(p.name) for p in (run / "attempts").iterdir()) == [1, 2, 3, 4, 5, 6, 7]

    # round 1: two parallel candidates (Send); slot 0 first answered without code and was told so
    first, second = attempt_json(run, 1), attempt_json(run, 2)
    assert (
        first["verdict"]["error_class"] == "nan_inf_mismatch"
        and second["verdict"]["error_class"] == "forbidden_api"
    )
    assert [e["node"] for e in events(run, "no_code")] == ["generator"]
    assert "could not be used" in (run / "attempts" / "1" / "prompt.md").read_text()

    # repair: the reflector's diagnosis reached the repair prompt; the fix is a child of the failure
    fixed = attempt_json(run, 3)
    assert fixed["parent_id"] == 1 and fixed["mode"] == "repair" and fixed["verdict"]["passed"]
    assert (
        "without subtracting the row maximum" in (run / "attempts" / "3" / "prompt.md").read_text()
    )
    pairs = [json.loads(line) for line in (run / "pairs.jsonl").read_text().splitlines()]
    assert [(p["failing"]["id"], p["fixing"]["id"], p["fix_class"]) for p in pairs] == [
        (1, 3, "numerical stability")
    ]
    assert (
        pairs[0]["failing"]["verdict"]["error_class"] == "nan_inf_mismatch"
        and "+        m_new = tl.maximum(m, x)" in pairs[0]["diff"]
    )

    # optimisation: predictions and measured outcomes logged; only the significant one accepted
    outcomes = {e["id"]: e for e in events(run, "prediction_outcome")}
    assert (
        outcomes[5]["predicted_gain"] == 0.12
        and outcomes[5]["accepted"]
        and outcomes[5]["scripted"]
    )
    assert not outcomes[6]["accepted"] and not outcomes[7]["accepted"]
    assert attempt_json(run, 5)["accepted"] is True and attempt_json(run, 6)["accepted"] is False
    assert "BLOCK_N: int = 2048" in result.best_kernel.read_text() and result.best_attempt == 5

    # dropout after one stale round: never the incumbent (5) or the latest (6); files untouched
    (drop,) = events(run, "dropout")
    assert (
        drop["incumbent"] == 5
        and 5 not in drop["masked"]
        and 6 not in drop["masked"]
        and len(drop["masked"]) == 2
    )
    assert all(
        not attempt_json(run, i)["masked"] for i in drop["masked"]
    )  # audit trail on disk unchanged
    history = (
        (run / "attempts" / "7" / "prompt.md")
        .read_text()
        .split("## History", 1)[1]
        .split("## The incumbent")[0]
    )
    shown = {
        int(line.split("|")[1].strip(" *"))
        for line in history.splitlines()
        if line.startswith("| ") and line[2].isdigit()
    }
    assert shown == {1, 2, 3, 4, 5, 6} - set(drop["masked"])

    summary = json.loads((run / "best" / "summary.json").read_text())
    came = summary["provenance"]  # the model's optimisation of its own repair of attempt 1
    assert (
        came["kind"] == "optimized"
        and came["parent_id"] == 3
        and came["name"].startswith("the model replay")
    )
    assert came["base"]["kind"] == "model" and came["base"]["parent_id"] == 1
    assert summary["measurements_scripted"] and "SCRIPTED" in summary["note"]
    assert summary["speed"].endswith("speed not measured (no GPU)")  # no fake speed-up on a CPU
    assert summary["budget"]["used"]["scripted_calls"] == summary["budget"]["used"]["calls"] == 9
    manifest = json.loads((run / "manifest.json").read_text())
    assert (
        manifest["config"]["scripted_measure"] is True
        and manifest["fingerprint"]["device"] == "cpu"
    )
    assert {"torch", "triton", "langgraph"} <= set(manifest["versions"]) and "revision" in manifest[
        "git"
    ]


def test_token_budget_stops_the_run_cleanly(tmp_path: Path) -> None:
    torch_softmax = (FIXTURES / "kernels" / "softmax_torch.py").read_text()
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": f"```python\n{torch_softmax}```"}) + "\n")
    result = api.run(
        "softmax_fp32",
        llm=f"replay:{script}",
        device="cpu",
        runs_dir=tmp_path,
        budget="tokens=1",
        settings={**FAST, "agent.candidates": 1},
        run_id="budget",
        quiet=True,
    )
    assert result.finished and result.best_kernel is None
    assert result.reason.startswith("budget spent: tokens") and "used of 1" in result.reason
    # a call whose prompt alone is over the budget is not made (before, it was, and overspent)
    assert "not made" in result.reason and events(result.run_dir, "llm_call") == []
    assert [e["node"] for e in events(result.run_dir, "budget_stop")] == ["generator"]
    assert (
        json.loads((result.run_dir / "summary.json").read_text())["finish_reason"] == result.reason
    )


class Crash(BaseException):
    """Stands for the process dying in the middle of the evaluator."""


def test_offline_tunable_search_and_a_crash_inside_the_evaluator_lose_nothing(
    tmp_path: Path,
) -> None:
    calls = {"n": 0}

    def crash_once(task: object, incumbent: str, candidate: str) -> Any:
        calls["n"] += 1
        raise Crash("killed while re-measuring")

    with pytest.raises(Crash):
        api.run(
            "softmax_fp32",
            llm="offline",
            method="offline",
            device="cpu",
            runs_dir=tmp_path,
            budget="iterations=3",
            settings=FAST,
            run_id="search",
            quiet=True,
            seams=Seams(scripted_measure=crash_once),
        )
    run = tmp_path / "search"
    assert (
        calls["n"] == 1 and (run / "attempts" / "2" / "verdict.json").is_file()
    )  # judged and written before the crash

    result = api.resume(
        "search", runs_dir=tmp_path, quiet=True, seams=Seams(scripted_measure=always_gain)
    )
    assert result.finished and result.reason == "iteration budget spent (3 of 3 rounds)"
    judged = [e["id"] for e in events(run, "attempt")]
    assert judged == [1, 2, 3]  # attempt 2 was not judged twice
    assert [e["id"] for e in events(run, "attempt_recovered")] == [2]
    a2, a3 = attempt_json(run, 2), attempt_json(run, 3)
    assert (
        a2["change"] == "BLOCK_N: 4096 -> 2048" and a2["accepted"] and a2["measurement"]["scripted"]
    )
    assert (
        a3["parent_id"] == 2
        and a3["change"] == "BLOCK_N: 2048 -> 1024"
        and a3["predicted_gain"] is None
    )
    # provenance survives the crash: attempt 2's record is read back from disk, 3's built on it
    assert a2["provenance"]["label"] == "optimized-from:1"
    assert a3["provenance"]["label"] == "optimized-from:2"
    assert a3["provenance"]["base"]["kind"] == "task_solution"  # the lineage's root, not 2
    assert "BLOCK_N: int = 1024" in result.best_kernel.read_text()
    code = (run / "attempts" / "2" / "code.py").read_text()
    assert code.replace("BLOCK_N: int = 2048", "BLOCK_N: int = 4096") == SOLUTION


def test_offline_policy_end_to_end_without_a_knowledge_base_is_honest_about_speed(
    tmp_path: Path,
) -> None:
    def no_kb() -> Any:
        raise RuntimeError("chromadb is not reachable")

    result = api.run(
        "softmax_fp32",
        llm="offline",
        device="cpu",
        runs_dir=tmp_path,
        # only the task's own solution to start from (no generated kernel beside it)
        settings={"judge.trials": 1, "kb": "auto", "offline.codegen": False},
        run_id="offline",
        quiet=True,
        seams=Seams(open_kb=no_kb),
    )
    run = result.run_dir
    assert (
        "knowledge base unavailable (RuntimeError: chromadb is not reachable)"
        in events(run, "retrieve")[0]["note"]
    )
    assert result.best_attempt == 1 and result.best_kernel.read_text() == SOLUTION
    assert result.reason.startswith("nothing can be measured here (no GPU)")
    assert events(run, "optimizer")[0]["note"] == result.reason  # the optimizer says so itself
    assert not events(run, "prediction_outcome") and result.summary["measurements"] == 0
    assert json.loads((run / "attempts" / "1" / "profile.json").read_text())[
        "diagnosis"
    ].startswith("not measured")


def test_benchmark_mode_takes_only_what_the_kb_returns_with_the_task_hidden(tmp_path: Path) -> None:
    template = ROOT / "knowledge_base" / "kernels" / "tpl_online_softmax.py"
    asked: list[Any] = []

    def fake_kb() -> Any:
        def search(query: str = "", **kw: Any) -> list[Any]:
            asked.append(kw.get("hidden_task"))
            return [
                SimpleNamespace(
                    id="kernel:tpl_online_softmax",
                    kind="kernel",
                    title="Online softmax",
                    path=str(template),
                    tier="promising",
                    score=0.7,
                    snippet="online softmax",
                    text=template.read_text(),
                )
            ]

        return SimpleNamespace(search=search)

    result = api.run(
        "softmax_fp32",
        llm="offline",
        device="cpu",
        runs_dir=tmp_path,
        settings={"judge.trials": 1, "benchmark": True, "offline.codegen": False},
        run_id="hidden",
        quiet=True,
        seams=Seams(open_kb=fake_kb),
    )
    assert asked and set(asked) == {"softmax_fp32"}
    code = result.best_kernel.read_text()
    assert "return online_softmax(x)" in code and "def _softmax_kernel" not in code

    empty = api.run(
        "softmax_fp32",
        llm="offline",
        device="cpu",
        runs_dir=tmp_path,
        settings={"kb": "off", "benchmark": True, "offline.codegen": False},
        run_id="hidden-empty",
        quiet=True,
    )
    assert (
        empty.best_kernel is None
        and empty.reason == "offline policy: no reference kernel implements the task's entry point"
    )
    assert not (empty.run_dir / "attempts" / "1").exists()


def test_offline_benchmark_mode_writes_a_kernel_from_the_reference(tmp_path: Path) -> None:
    """With nothing to retrieve, the offline policy still has the kernel agents/offline/codegen/translate.py writes
    from the task's PyTorch reference; it is judged like any other and logged as generated."""
    result = api.run(
        "softmax_fp32",
        llm="offline",
        device="cpu",
        runs_dir=tmp_path,
        settings={"kb": "off", "benchmark": True, "judge.trials": 1, "budget.iterations": 1},
        run_id="generated",
        quiet=True,
    )
    assert result.best_kernel is not None, result.reason
    code = result.best_kernel.read_text()
    assert "agents/offline/codegen/translate.py" in code and "@triton.jit" in code
    events = [
        json.loads(line) for line in (result.run_dir / "events.jsonl").read_text().splitlines()
    ]
    (note,) = [e for e in events if e.get("event") == "codegen"]
    assert note["note"].startswith("generated from the reference (row")


def test_an_openai_compatible_server_on_localhost_drives_the_graph(tmp_path: Path) -> None:
    from llm_servers import FakeLLMServer, openai_error, openai_reply

    fixed = (FIXTURES / "kernels" / "softmax_fixed.py").read_text()
    with FakeLLMServer("openai") as server:
        server.answer(429, openai_error("slow down"), headers={"retry-after": "0.05"})
        server.answer(
            200,
            openai_reply(
                f"```python\n{fixed}```",
                model="qwen3-coder",
                prompt_tokens=1500,
                completion_tokens=700,
            ),
        )
        result = api.run(
            "softmax_fp32",
            llm=f"openai-compatible:{server.base_url}#qwen3-coder",
            device="cpu",
            runs_dir=tmp_path,
            settings={**FAST, "agent.candidates": 1},
            run_id="compat",
            quiet=True,
        )
        sent = server.requests[-1].json
    assert result.best_attempt == 1 and result.best_kernel.read_text() == fixed
    assert "softmax(x: torch.Tensor) -> torch.Tensor" in json.dumps(sent["messages"])
    (call,) = events(result.run_dir, "llm_call")
    assert (
        call["provider"] == "openai-compatible"
        and call["attempts"] == 2
        and call["input_tokens"] == 1500
    )
    used = result.summary["budget"]["used"]
    assert used["tokens"] == 2200 and used["unpriced_calls"] == 1 and used["cost_is_lower_bound"]
