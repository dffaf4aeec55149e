"""Method presets are configurations of the one graph, and each behaves as its method does.

The runs use the real judge on the CPU (Triton interpreter) and the replay provider. Kernels that
call torch.softmax are refused by the judge's static check (fast); the fixed softmax is judged
correct through the interpreter (a few seconds each), so the tests use it sparingly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fixtures.agent.scripted import scripted_measure

from agents import api
from agents.core.presets import PRESETS
from agents.core.seams import Seams
from agents.core.settings import BY_KEY, SETTINGS, resolve

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "tests" / "fixtures" / "agent" / "kernels"
FIXED = (KERNELS / "softmax_fixed.py").read_text()
TORCH = (KERNELS / "softmax_torch.py").read_text()
BLOCK_2048 = FIXED.replace("BLOCK_N: int = 4096", "BLOCK_N: int = 2048")
FAST = {"kb": "off", "judge.trials": 1}
MODEL_TEST = """import sys

import torch
from kernel import softmax

x = torch.randn(5, 37)
x[1, 3] = 1.0e4
got = softmax(x)
want = torch.softmax(x, dim=-1)
if not torch.allclose(got, want, atol=1e-5, rtol=1e-5):
    print("FAIL: largest error", (got - want).abs().max().item())
    sys.exit(1)
print("PASS")
"""


def block(code: str) -> str:
    return f"```python\n{code.rstrip()}\n```\n"


def script(tmp_path: Path, entries: list[dict[str, str]]) -> str:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return f"replay:{path}"


def events(run_dir: Path, kind: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    return [r for r in rows if r["event"] == kind]


def attempt_json(run_dir: Path, i: int) -> dict[str, Any]:
    return json.loads((run_dir / "attempts" / str(i) / "attempt.json").read_text())


def attempt_ids(run_dir: Path) -> list[int]:
    return sorted(int(p.name) for p in (run_dir / "attempts").iterdir() if p.name.isdigit())


def test_every_preset_is_only_settings_of_the_one_graph(tmp_path: Path) -> None:
    assert {"aka", "offline", "single-shot", "kernelagent", "geak"} <= set(PRESETS)
    method = next(s for s in SETTINGS if s.key == "method")
    assert set(method.choices) == set(PRESETS)
    for name, values in PRESETS.items():
        assert set(values) <= set(BY_KEY), f"preset {name} names unknown settings"
        merged = resolve({"method": name}, env={}, cwd=tmp_path, user_file=tmp_path / "none")
        for key, value in values.items():
            assert merged[key] == value and merged.sources[key] == f"preset {name}"
        # only the offline policy fixes the model; the others take the run's --llm
        assert ("llm" in values) == (name == "offline")


def test_single_shot_makes_one_model_call_and_stops_even_on_failure(tmp_path: Path) -> None:
    llm = script(tmp_path, [{"text": block(TORCH)}, {"text": block(FIXED)}] * 3)
    result = api.run(
        "softmax_fp32",
        llm=llm,
        method="single-shot",
        device="cpu",
        runs_dir=tmp_path,
        budget="iterations=5",
        settings={"judge.trials": 1},
        run_id="one",
        quiet=True,
    )
    run = result.run_dir
    assert len(events(run, "llm_call")) == 1 and attempt_ids(run) == [1]
    assert attempt_json(run, 1)["verdict"]["error_class"] == "forbidden_api"
    assert result.finished and result.best_kernel is None and result.reason.startswith("gave up")
    assert not events(run, "reflection")  # no loop: nothing diagnoses the failure

    # a reply without code is not fed back: still one call, and nothing to judge
    llm = script(tmp_path / "scripts", [{"text": "I would tile it by rows."}] * 3)
    result = api.run(
        "softmax_fp32",
        llm=llm,
        method="single-shot",
        device="cpu",
        runs_dir=tmp_path,
        settings={"judge.trials": 1},
        run_id="nocode",
        quiet=True,
    )
    assert len(events(result.run_dir, "llm_call")) == 1
    assert attempt_ids(result.run_dir) == [] and result.best_kernel is None


def test_kernelagent_refines_each_seed_on_its_own_feedback_and_stops_at_the_first_correct(
    tmp_path: Path,
) -> None:
    # slots 1..3 are told "candidate k of 4"; slot 0 takes the entries without a condition
    entries = [
        {"match": f"candidate {k} of 4", "text": block(TORCH)} for k in (2, 3, 4) for _ in (0, 1)
    ]
    entries += [{"text": block(TORCH)}, {"text": "Subtract the max.\n\n" + block(FIXED)}]
    result = api.run(
        "softmax_fp32",
        llm=script(tmp_path, entries),
        method="kernelagent",
        device="cpu",
        runs_dir=tmp_path,
        settings={"judge.trials": 1},
        run_id="ka",
        quiet=True,
    )
    run = result.run_dir
    # round 1: four seeds, all refused; round 2: slot 0's repair is correct, so the other three
    # repairs (already written in parallel) are never judged
    assert attempt_ids(run) == [1, 2, 3, 4, 5]
    assert [attempt_json(run, i)["slot"] for i in range(1, 6)] == [0, 1, 2, 3, 0]
    fixed = attempt_json(run, 5)
    assert fixed["verdict"]["passed"] and fixed["mode"] == "repair" and fixed["parent_id"] == 1
    round2 = [e for e in events(run, "generator") if e["mode"] == "repair"]
    assert {e["slot"]: e["parent"] for e in round2} == {0: 1, 1: 2, 2: 3, 3: 4}
    (cancelled,) = events(run, "cancelled")
    assert cancelled["slots"] == [1, 2, 3]
    assert result.best_attempt == 5 and result.reason.startswith("first correct kernel")
    calls = events(run, "llm_call")
    assert len(calls) == 8 and {c["node"] for c in calls} == {"generator"}  # no reflector model
    # each seed sees its own past only, and the judge's feedback on its own kernel
    prompt = (run / "attempts" / "5" / "prompt.md").read_text()
    assert "The kernel that failed (attempt 1)" in prompt and "forbidden_api" in prompt
    history = prompt.split("## History", 1)[1].split("## The kernel that failed")[0]
    assert "| 1 " in history and not any(f"| {i} " in history for i in (2, 3, 4))


def test_kernelagent_with_llm_tests_runs_the_models_test_as_feedback_only(
    tmp_path: Path,
) -> None:
    entries = [{"node": "write_test", "text": block(MODEL_TEST)}]
    entries += [{"node": "generator", "text": block(TORCH)}] * 2
    result = api.run(
        "softmax_fp32",
        llm=script(tmp_path, entries),
        method="kernelagent",
        device="cpu",
        runs_dir=tmp_path,
        budget="iterations=2",
        settings={"judge.trials": 1, "agent.candidates": 1, "agent.llm_tests": True},
        run_id="tests",
        quiet=True,
    )
    run = result.run_dir
    assert (run / "model_test" / "test_kernel.py").read_text().rstrip() == MODEL_TEST.rstrip()
    assert "## Your test" in (run / "attempts" / "1" / "prompt.md").read_text()
    first = attempt_json(run, 1)
    # torch.softmax passes the model's own test, but the judge refuses it: the judge decides
    assert first["model_test"]["passed"] and "PASS" in first["model_test"]["output"]
    assert not first["verdict"]["passed"] and first["verdict"]["error_class"] == "forbidden_api"
    assert [e["passed"] for e in events(run, "model_test")] == [True, True]
    repair = (run / "attempts" / "2" / "prompt.md").read_text()
    assert "Your own test (`test_kernel.py`) on this kernel: passed" in repair
    assert result.best_kernel is None and [e["node"] for e in events(run, "llm_call")] == [
        "write_test",
        "generator",
        "generator",
    ]


def test_geak_caps_repairs_per_approach_then_starts_a_fresh_one(tmp_path: Path) -> None:
    entries = [{"node": "generator", "text": block(TORCH)}] * 5
    entries += [{"node": "reflector", "text": "It calls torch.softmax; write a Triton kernel."}] * 4
    result = api.run(
        "softmax_fp32",
        llm=script(tmp_path, entries),
        method="geak",
        device="cpu",
        runs_dir=tmp_path,
        budget="iterations=5",
        settings={**FAST, "agent.candidates": 1, "agent.max_repairs": 1},
        run_id="cap",
        quiet=True,
    )
    run = result.run_dir
    tree = [(attempt_json(run, i)["mode"], attempt_json(run, i)["parent_id"]) for i in range(1, 6)]
    assert tree == [("fresh", None), ("repair", 1), ("fresh", None), ("repair", 3), ("fresh", None)]
    # no give-up after the failed approaches: the budget ends the run
    assert result.reason == "iteration budget spent (5 of 5 rounds)"
    assert [e["by"] for e in events(run, "reflection")] == ["llm"] * 4


def test_geak_feeds_the_best_ancestors_to_the_optimizer(tmp_path: Path) -> None:
    entries = [
        {"match": "candidate 2 of 2", "text": block(BLOCK_2048)},
        {"node": "optimizer", "text": "CHANGE: use torch\nPREDICTED_GAIN: 5%\n\n" + block(TORCH)},
        {"node": "reflector", "text": "torch.softmax is a fallback."},
        {"text": block(FIXED)},
    ]
    result = api.run(
        "softmax_fp32",
        llm=script(tmp_path, entries),
        method="geak",
        device="cpu",
        runs_dir=tmp_path,
        budget="iterations=2",
        settings=FAST,
        run_id="ancestors",
        quiet=True,
        seams=Seams(scripted_measure=scripted_measure),
    )
    run = result.run_dir
    # round 1: two correct kernels; the BLOCK_N 2048 one wins the (scripted) re-measurement
    assert attempt_json(run, 1)["verdict"]["passed"] and attempt_json(run, 2)["accepted"]
    optimizer_prompt = (run / "attempts" / "3" / "prompt.md").read_text()
    assert "The incumbent (attempt 2)" in optimizer_prompt
    assert "Other correct kernels (the best 1 besides the incumbent)" in optimizer_prompt
    assert "### Attempt 1 (generator/fresh): correct" in optimizer_prompt
    assert optimizer_prompt.count("BLOCK_N: int = 4096") == 1  # attempt 1's code, in full
    assert attempt_json(run, 3)["mode"] == "optimize" and result.best_attempt == 2


def test_the_methods_page_states_the_presets_as_the_code_has_them() -> None:
    """docs/methods.md's table: effective values, bold where the preset sets them."""
    defaults = {s.key: s.default for s in SETTINGS}
    lines = (ROOT / "docs" / "methods.md").read_text().splitlines()
    start = lines.index("| setting | single-shot | kernelagent | geak | aka | offline |")
    names = [c.strip() for c in lines[start].strip("|").split("|")][1:]
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1:]
    assert set(rows) == {k for p in PRESETS.values() for k in p} - {"llm"}
    for key, cells in rows.items():
        for name, cell in zip(names, cells, strict=True):
            value = PRESETS[name].get(key, defaults[key])
            text = str(value).lower() if isinstance(value, bool) else str(value)
            assert cell == (f"**{text}**" if key in PRESETS[name] else text), (key, name, cell)
