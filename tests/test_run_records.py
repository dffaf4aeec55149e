"""The run records (benchmarks.results.records): the agent builds the pair record, the results code
parses run files into the same models, and a malformed file is one error that names it."""

import json

import pytest

from agents.core.pairs import make_pair
from agents.core.state import Attempt, VerdictSummary
from benchmarks.results.pairs_export import collect_pairs
from benchmarks.results.records import RunFileError, RunPair, read_manifest
from benchmarks.results.rows import rows_from_run_dir

BROKEN = "def f(x):\n    return x.exp() / x.exp().sum()\n"
FIXED = "def f(x):\n    x = x - x.max()\n    return x.exp() / x.exp().sum()\n"


def _attempt(i: int, parent: int | None, passed: bool, error: str) -> Attempt:
    return Attempt(
        id=i,
        parent_id=parent,
        node="generator" if parent is None else "repair",
        mode="fresh" if parent is None else "repair",
        iteration=i,
        key=f"k{i}",
        code_path=f"attempts/{i}/code.py",
        code_sha256="x",
        verdict=VerdictSummary(passed=passed, error_class=error),
    )


def test_the_pair_line_keeps_its_wire_format():
    failing, fixing = _attempt(1, None, False, "nan_inf_mismatch"), _attempt(2, 1, True, "none")
    pair = make_pair(failing, BROKEN, {"passed": False}, fixing, FIXED, {"passed": True}, 1)
    line = pair.to_json()
    assert list(line) == [
        "failing",
        "fixing",
        "hops",
        "error_class",
        "fix_class",
        "fix_reasons",
        "diff",
    ]
    assert list(line["failing"]) == ["id", "node", "code_path", "code", "verdict"]
    assert line["failing"] == {
        "id": 1,
        "node": "generator",
        "code_path": "attempts/1/code.py",
        "code": BROKEN,
        "verdict": {"passed": False},
    }
    assert line["error_class"] == "nan_inf_mismatch" and line["hops"] == 1
    assert RunPair.model_validate(json.loads(json.dumps(line))) == pair  # read back unchanged


def _run(tmp_path, manifest: str):
    run = tmp_path / "run"
    (run / "attempts" / "0").mkdir(parents=True)
    (run / "manifest.json").write_text(manifest)
    return run


def test_a_malformed_manifest_is_one_error_naming_the_file(tmp_path):
    run = _run(tmp_path, "{not json")
    with pytest.raises(RunFileError, match=r"run/manifest\.json: not JSON"):
        rows_from_run_dir(run)
    (run / "pairs.jsonl").write_text("")
    pairs = collect_pairs([run])  # the run is left out, named with its file; nothing else fails
    assert not pairs.runs and "run/manifest.json: not JSON" in pairs.skipped[0]
    (run / "manifest.json").write_text(json.dumps({"config": {"seed": "many"}}))
    with pytest.raises(RunFileError, match=r"manifest\.json: not a run manifest: config\.seed"):
        read_manifest(run)


def test_a_malformed_attempt_file_is_one_error_naming_the_file(tmp_path):
    run = _run(tmp_path, json.dumps({"run_id": "r", "task": {"id": "softmax_fp32"}}))
    (run / "attempts" / "0" / "attempt.json").write_text(json.dumps({"parent_id": "first"}))
    with pytest.raises(
        RunFileError, match=r"attempts/0/attempt\.json: not an attempt record: parent_id"
    ):
        rows_from_run_dir(run)


def test_a_line_that_is_not_a_pair_record_is_skipped_with_its_field(tmp_path):
    run = _run(tmp_path, json.dumps({"run_id": "r", "task": {"id": "softmax_fp32"}}))
    (run / "pairs.jsonl").write_text(json.dumps({"failing": {"id": 1, "code": BROKEN}}) + "\n")
    pairs = collect_pairs([run])
    assert not pairs.records and pairs.runs[0].pairs_read == 1
    assert "pairs.jsonl:1: not a pair record (fixing: Field required)" in pairs.skipped[0]
