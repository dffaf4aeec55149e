"""Small pieces of the agent, no judge: reducers, history and dropout, the checkpoint's record
types, prompts with StrictUndefined, the optimizer's reply parsing, fix classes, run files."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import jinja2
import pytest

from agents.core.diagnosis import diagnose
from agents.core.model_policy import parse_proposal
from agents.core.nodes.dropout import dropout, eligible
from agents.core.pairs import classify_fix
from agents.core.prompting import history_rows, render, task_contract
from agents.core.rundir import RunDir
from agents.core.state import (
    CHECKPOINT_TYPES,
    Attempt,
    Candidate,
    Measurement,
    VerdictSummary,
    collect_pending,
    upsert_attempts,
    visible_history,
)
from agents.offline import policy as offline

ROOT = Path(__file__).resolve().parents[1]
BROKEN = (ROOT / "tests" / "known_bad" / "softmax.py").read_text()
FIXED = (ROOT / "tests" / "fixtures" / "agent" / "kernels" / "softmax_fixed.py").read_text()
SOLUTION = (ROOT / "knowledge_base" / "kernels" / "softmax.py").read_text()


def attempt(
    i: int, passed: bool = True, parent: int | None = None, masked: bool = False
) -> Attempt:
    return Attempt(
        id=i,
        parent_id=parent,
        node="generator",
        mode="fresh",
        iteration=i,
        key=f"k{i}",
        code_path=f"attempts/{i}/code.py",
        code_sha256="x",
        masked=masked,
        verdict=VerdictSummary(
            passed=passed, error_class="none" if passed else "numerical_mismatch"
        ),
    )


# -- state ----------------------------------------------------------------------------------------


def test_attempts_reducer_replaces_by_id_and_keeps_order() -> None:
    merged = upsert_attempts([attempt(1), attempt(2)], [attempt(2, masked=True), attempt(3)])
    assert [a.id for a in merged] == [1, 2, 3] and merged[1].masked


def test_pending_reducer_collects_parallel_writes_and_none_clears() -> None:
    c = [
        Candidate(key=str(i), slot=i, node="generator", mode="fresh", iteration=1, code="")
        for i in (1, 0)
    ]
    assert [x.slot for x in collect_pending([c[0]], [c[1]])] == [0, 1]
    assert collect_pending(c, None) == []


def test_visible_history_hides_masked_and_always_shows_the_incumbent() -> None:
    state = {
        "attempts": [attempt(1), attempt(2, masked=True), attempt(3), attempt(4), attempt(5)],
        "incumbent_id": 1,
    }
    assert [a.id for a in visible_history(state, 2)] == [1, 4, 5]
    assert [a.id for a in visible_history(state, 10)] == [1, 3, 4, 5]


def test_dropout_never_masks_incumbent_or_latest_and_touches_no_file(tmp_path: Path) -> None:
    state = {
        "attempts": [attempt(i) for i in range(1, 8)],
        "incumbent_id": 3,
        "iteration": 6,
        "stale": 3,
    }
    assert eligible(state) == [1, 2, 4, 5, 6]
    events = []
    ctx = SimpleNamespace(
        config=SimpleNamespace(seed=0),
        event=lambda kind, **f: events.append((kind, f)),
        progress=SimpleNamespace(note=lambda *a, **k: None),
    )
    out = dropout(state, ctx)
    masked = [a.id for a in out["attempts"]]
    assert len(masked) == 3 and 3 not in masked and 7 not in masked
    assert all(a.masked for a in out["attempts"])
    assert events[0][0] == "dropout" and events[0][1]["masked"] == masked
    assert (
        dropout(state, ctx)["attempts"] == out["attempts"]
    )  # seeded: the same run masks the same ones


def test_checkpoint_serializer_rebuilds_our_records(tmp_path: Path) -> None:
    from agents.core.graph import checkpointer

    saver = checkpointer(tmp_path / "c.sqlite")
    a = attempt(1).model_copy(
        update={"measurement": Measurement(measured=True, gain=0.1, scripted=True)}
    )
    kind, blob = saver.serde.dumps_typed({"attempts": [a]})
    back = saver.serde.loads_typed((kind, blob))["attempts"][0]
    assert isinstance(back, Attempt) and isinstance(back.measurement, Measurement) and back == a
    assert {t.__name__ for t in CHECKPOINT_TYPES} >= {"Attempt", "Candidate"}


# -- prompts --------------------------------------------------------------------------------------


def test_prompts_fail_loudly_on_a_missing_variable() -> None:
    with pytest.raises(jinja2.UndefinedError):
        render("nocode.md.j2")


def test_generator_prompt_carries_the_task_contract() -> None:
    from benchmarks.loading import get_task

    task = get_task("softmax_fp32")
    contract = task_contract(task)
    text = render(
        "generator.md.j2",
        task=contract,
        device={"name": "cpu", "peaks": "not measured"},
        knowledge=[],
        knowledge_note="kb off",
        history=history_rows([attempt(1)], 1),
        slot=0,
        candidates=1,
    )
    for needle in (
        "softmax(x: torch.Tensor) -> torch.Tensor",
        "atol 1e-05",
        "torch.softmax",
        "tail",
        "not measured",
        "| 1 * |",
    ):
        assert needle in text, needle


def test_optimizer_reply_states_change_and_gain() -> None:
    assert parse_proposal("CHANGE: BLOCK_N 4096 -> 2048\nPREDICTED_GAIN: 12%\n```python\n```") == (
        "BLOCK_N 4096 -> 2048",
        0.12,
    )
    assert parse_proposal("**CHANGE**: fuse\npredicted gain: 1.3x") == ("fuse", pytest.approx(0.3))
    assert parse_proposal("just code") == ("", None)


# -- offline policy -------------------------------------------------------------------------------


def test_set_tunables_rewrites_only_the_defaults() -> None:
    out = offline.set_tunables(SOLUTION, "softmax", {"BLOCK_N": 2048, "num_warps": 4})
    assert "def softmax(x: torch.Tensor, BLOCK_N: int = 2048, num_warps: int = 4)" in out
    changed = [
        (a, b) for a, b in zip(SOLUTION.splitlines(), out.splitlines(), strict=True) if a != b
    ]
    assert len(changed) == 1 and changed[0][0].startswith(
        "def softmax("
    )  # comments, KB_META, body untouched
    assert offline.tunable_values(out, "softmax") == {"BLOCK_N": 2048, "num_warps": 4}
    with pytest.raises(ValueError, match="no keyword argument"):
        offline.set_tunables(SOLUTION, "softmax", {"ROWS": 2})


def test_tunable_search_tries_nearest_untried_neighbour_first() -> None:
    space = {"BLOCK_N": [1024, 2048, 4096, 8192], "num_warps": [4, 8, 16]}
    current = {"BLOCK_N": 4096, "num_warps": 8}
    assert offline.next_config(current, space, [current]) == {"BLOCK_N": 2048, "num_warps": 8}
    tried = [current, {"BLOCK_N": 2048, "num_warps": 8}, {"BLOCK_N": 8192, "num_warps": 8}]
    assert offline.next_config(current, space, tried) == {"BLOCK_N": 4096, "num_warps": 4}
    everything = [
        {"BLOCK_N": b, "num_warps": w} for b in space["BLOCK_N"] for w in space["num_warps"]
    ]
    assert offline.next_config(current, space, everything) is None


def test_adapt_wraps_a_launcher_of_another_name() -> None:
    template = (ROOT / "knowledge_base" / "kernels" / "tpl_online_softmax.py").read_text()
    code, how = offline.adapt(template, "softmax", ["x"])
    assert how == "wrapped online_softmax()" and code.rstrip().endswith("return online_softmax(x)")
    assert offline.adapt(SOLUTION, "softmax", ["x"])[1] == "defines the entry point"
    assert offline.adapt(SOLUTION, "softmax", ["logits"]) is None


def test_benchmark_mode_never_offers_the_tasks_own_solution() -> None:
    from benchmarks.loading import get_task

    task = get_task("softmax_fp32")
    own = {"id": "kernel:softmax", "path": "knowledge_base/kernels/softmax.py", "text": SOLUTION}
    normal = offline.reference_kernels(task, [own], benchmark=False)
    assert [r["id"] for r in normal] == ["kernel:softmax"]  # the solution once, not twice
    assert offline.reference_kernels(task, [own], benchmark=True) == []


def test_rule_diagnosis_names_the_fix() -> None:
    v = VerdictSummary(
        passed=False,
        error_class="nan_inf_mismatch",
        stage_reached="call",
        message="NaN [shape tail {'M': 7}, mode outlier]",
    )
    d = diagnose(v)
    assert "max" in d["advice"] and "tail" in d["diagnosis"] and "outlier" in d["diagnosis"]


# -- pairs ----------------------------------------------------------------------------------------


def test_fix_classes_follow_the_verdict_and_the_diff() -> None:
    assert classify_fix(BROKEN, FIXED, "nan_inf_mismatch")[0] == "numerical stability"
    masked = FIXED.replace('mask=cols < N, other=float("-inf")', "")
    assert classify_fix(masked, FIXED, "crash")[0] == "mask/bounds"
    no_cast = FIXED.replace(".to(y_ptr.dtype.element_ty)", "")
    assert classify_fix(no_cast, FIXED, "dtype_mismatch")[0] == "dtype/cast"
    bad_grid = FIXED.replace("[(M,)]", "[(1,)]")
    assert classify_fix(bad_grid, FIXED, "numerical_mismatch")[0] == "grid/launch"
    assert (
        classify_fix(FIXED.replace("tl.maximum", "tl.maxx"), FIXED, "compile_error")[0]
        == "API misuse"
    )
    assert classify_fix("x = 1\n", FIXED, "syntax_error")[0] == "structural rewrite"


# -- run files ------------------------------------------------------------------------------------


def test_attempt_folders_are_whole_and_pairs_are_not_duplicated(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, "r")
    a = attempt(1)
    run.write_attempt(a, "code", json.dumps({"passed": True}), "prompt", "")
    assert sorted(p.name for p in run.attempt_dir(1).iterdir()) == [
        "attempt.json",
        "code.py",
        "prompt.md",
        "verdict.json",
    ]
    assert run.find_attempt("k1") == a and run.find_attempt("nope") is None
    assert not list((tmp_path / "r" / "attempts").glob(".*"))
    pair = {"failing": {"id": 1}, "fixing": {"id": 2}}
    assert run.append_pair(pair) and not run.append_pair(pair)
    with pytest.raises(FileExistsError, match="--resume r"):
        RunDir.create(tmp_path, "r")


# -- routing --------------------------------------------------------------------------------------


def routing_ctx(**overrides: object) -> SimpleNamespace:
    from agents.core.config import AgentConfig
    from agents.core.context import policy_for

    config = AgentConfig(task="softmax_fp32", **overrides)
    return SimpleNamespace(
        config=config,
        policy=policy_for(config.offline),
        tracker=SimpleNamespace(exceeded=lambda: None),
    )


def test_routing_after_a_round() -> None:
    from agents.core.graph import after_evaluation, after_reflection

    ok, bad = attempt(2, parent=1), attempt(3, passed=False, parent=2)
    base = {
        "attempts": [attempt(1), ok, bad],
        "incumbent_id": 1,
        "iteration": 2,
        "stale": 1,
        "repair_streak": 0,
    }
    llm = routing_ctx(llm="replay:x", dropout_after=3)
    assert after_evaluation({**base, "last_batch": [2]}, llm) == "profile"
    assert after_evaluation({**base, "last_batch": [2], "stale": 3}, llm) == "dropout"
    assert after_evaluation({**base, "last_batch": [3]}, llm) == "reflector"
    assert (
        after_evaluation({**base, "last_batch": [2]}, routing_ctx(llm="replay:x", optimize=False))
        == "finish"
    )
    assert (
        after_evaluation({**base, "last_batch": [2], "iteration": 8}, llm) == "finish"
    )  # budget spent

    repairs = after_reflection({**base, "last_batch": [3], "repair_streak": 1}, llm)
    assert [s.arg["parent"].id for s in repairs] == [3, 3] and repairs[0].arg["mode"] == "repair"
    assert (
        after_reflection({**base, "last_batch": [3], "repair_streak": 4}, llm) == "profile"
    )  # out of repairs
    assert (
        after_reflection(
            {**base, "last_batch": [3], "repair_streak": 1}, routing_ctx(llm="offline")
        )
        == "profile"
    )
    assert (
        after_reflection({**base, "last_batch": [3], "repair_streak": 4, "stale": 3}, llm)
        == "dropout"
    )
