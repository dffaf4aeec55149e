"""`kernforge pairs export`: run directories' pairs.jsonl -> a deduplicated data set (jsonl, parquet,
Hugging Face datasets folder) with a card; tolerant of missing fields, explicit about what it skipped."""

import json

import pytest
import typer
from typer.testing import CliRunner

from agents.cli.pairs import pairs_app
from benchmarks.results.pairs_export import collect_pairs, export_pairs, normalise_code, pair_hash

BROKEN = "import triton\n\n\ndef softmax(x):\n    # no max subtraction\n    return x.exp() / x.exp().sum(-1, keepdim=True)\n"
FIXED = "import triton\n\n\ndef softmax(x):\n    m = x.max(-1, keepdim=True).values\n    return (x - m).exp() / (x - m).exp().sum(-1, keepdim=True)\n"
FAIL_VERDICT = {
    "task_id": "softmax_fp32",
    "passed": False,
    "stage_reached": "correct_standard",
    "error_class": "nan_inf_mismatch",
    "message": "NaN on outlier rows",
    "device": "cpu",
}
PASS_VERDICT = {
    "task_id": "softmax_fp32",
    "passed": True,
    "stage_reached": "no_fallback",
    "error_class": "none",
    "geomean_speedup_eager": None,
    "device": "cpu",
}


def flat(output: str) -> str:
    """CLI output with rich's line wrapping undone."""
    return " ".join(output.split())


def pair(failing_code, fixing_code, failing_id=1, fixing_id=2, **extra):
    return {
        "failing": {
            "id": failing_id,
            "node": "generator",
            "code_path": f"attempts/{failing_id}/code.py",
            "code": failing_code,
            "verdict": FAIL_VERDICT,
        },
        "fixing": {
            "id": fixing_id,
            "node": "generator",
            "code_path": f"attempts/{fixing_id}/code.py",
            "code": fixing_code,
            "verdict": PASS_VERDICT,
        },
        "hops": 1,
        "error_class": "nan_inf_mismatch",
        "fix_class": "numerical stability",
        "fix_reasons": ["nan_inf_mismatch fixed by a change touching max/exp/guards/precision"],
        "diff": "--- a\n+++ b\n",
        **extra,
    }


def make_run(root, run_id, llm, lines, created="2026-02-01T10:00:00+00:00"):
    run = root / run_id
    run.mkdir(parents=True)
    (run / "manifest.json").write_text(
        json.dumps(
            {
                "run_id": run_id,
                "created": created,
                "task": {"id": "softmax_fp32"},
                "llm": llm,
                "config": {"method": "aka", "llm": llm},
                "fingerprint": {"device": "cpu"},
            }
        )
    )
    (run / "pairs.jsonl").write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return run


@pytest.fixture
def runs(tmp_path):
    """A replay run (scripted) and a model run; the model run repeats the replay run's pair with other
    comments and spacing, has a malformed line, a line with no fixing code, and a pair whose optional
    fields are missing (its verdict is on disk)."""
    root = tmp_path / "runs"
    make_run(root, "r1-replay", "replay:scripted:repair.jsonl", [pair(BROKEN, FIXED)])
    reformatted = (
        BROKEN.replace("    # no max subtraction\n", "").replace("x.exp()", "x.exp( )")
        + "\n\n# trailing comment\n"
    )
    bare = {
        "failing": {"id": 3, "code": BROKEN + "\n# v2\ny = 1\n"},
        "fixing": {"id": 4, "code_path": "attempts/4/code.py"},
    }
    run2 = make_run(
        root,
        "r2-model",
        "openai:gpt-4o",
        [
            pair(reformatted, FIXED, 5, 6),
            "{not json",
            {"failing": {"id": 7, "code": BROKEN}, "fixing": {"id": 8}},
            bare,
        ],
        created="2026-02-02T10:00:00+00:00",
    )
    (run2 / "attempts" / "4").mkdir(parents=True)
    (run2 / "attempts" / "4" / "code.py").write_text(FIXED)
    (run2 / "attempts" / "4" / "verdict.json").write_text(json.dumps(PASS_VERDICT))
    return root


def test_normalised_hash_ignores_comments_docstrings_and_formatting():
    a = 'def f(x):\n    """Doc."""\n    return x+1  # add\n'
    b = "def f( x ):\n\n    return x + 1\n"
    assert normalise_code(a) == normalise_code(b)
    assert pair_hash(a, b) == pair_hash(b, a) != pair_hash(a, "def f(x):\n    return x + 2\n")
    assert (
        normalise_code("def f(:\n  x  =  1 # c\n") == "def f(:\nx = 1"
    )  # unparsable: text without comments


def test_collect_dedups_skips_and_fills(runs):
    pairs = collect_pairs([runs])
    assert len(pairs.records) == 2 and pairs.duplicates == 1
    first, bare = pairs.records
    assert first.run_id == "r1-replay" and first.scripted and first.model.startswith("replay:")
    assert (
        first.category == "normalization"
        and first.fix_class == "numerical stability"
        and first.failing_stage == "correct_standard"
    )
    assert json.loads(first.failing_verdict)["error_class"] == "nan_inf_mismatch"
    assert (
        not bare.scripted and bare.model == "openai:gpt-4o" and bare.fixing_code == FIXED
    )  # read from code_path
    assert (
        bare.fix_class == "unknown"
        and bare.error_class == "unknown"
        and bare.diff.startswith("--- attempts/3/code.py")
    )
    assert json.loads(bare.fixing_verdict)["passed"] is True and bare.failing_verdict == ""
    assert (
        pairs.filled["fix_class"] == 1
        and pairs.filled["failing_verdict"] == 1
        and pairs.filled["diff (recomputed)"] == 1
    )
    skipped = "\n".join(pairs.skipped)
    assert (
        "pairs.jsonl:2: not JSON" in skipped
        and "pairs.jsonl:3: no code for the fixing side" in skipped
    )
    assert [(r.run_id, r.pairs_read, r.pairs_kept) for r in pairs.runs] == [
        ("r1-replay", 1, 1),
        ("r2-model", 3, 1),
    ]


def test_jsonl_and_parquet_exports_with_a_card(runs, tmp_path):
    import pyarrow.parquet as pq

    out = export_pairs(
        [runs / "r1-replay", runs / "r2-model"], "jsonl", tmp_path / "ds" / "pairs.jsonl"
    )
    records = [json.loads(line) for line in out.out.read_text().splitlines()]
    assert len(records) == 2 and records[0]["scripted"] is True
    card = out.card.read_text()
    assert out.card == tmp_path / "ds" / "README.md"
    assert "1 of 2 pairs come from runs with the replay provider" in card
    assert "| r1-replay | softmax_fp32 | aka | replay:scripted:repair.jsonl | yes |" in card
    assert (
        "| failing_code |" in card
        and "2026-02-01T10:00:00+00:00 … 2026-02-02T10:00:00+00:00" in card
    )
    assert "not JSON" in card and "1 duplicate" in card

    pq_out = export_pairs([runs], "parquet", tmp_path / "ds" / "pairs.parquet")
    table = pq.read_table(pq_out.out)
    assert table.num_rows == 2 and table.column("fix_reasons").to_pylist()[1] == []
    assert table.column("fixing_speedup_eager").to_pylist() == [None, None]


def test_a_readme_that_is_not_ours_is_never_overwritten(runs, tmp_path):
    (tmp_path / "README.md").write_text("my notes")
    out = export_pairs([runs], "jsonl", tmp_path / "pairs.jsonl")
    assert (tmp_path / "README.md").read_text() == "my notes"
    assert out.card == tmp_path / "pairs.README.md"


def test_hf_datasets_folder_loads_offline(runs, tmp_path):
    datasets = pytest.importorskip(
        "datasets", reason="the Hugging Face datasets library is not installed"
    )
    out = export_pairs([runs], "hf", tmp_path / "hf")
    assert (out.out / "README.md").is_file()
    ds = datasets.load_from_disk(str(out.out))
    assert ds.num_rows == 2
    assert (
        ds[0]["task_id"] == "softmax_fp32"
        and ds[0]["scripted"] is True
        and ds[1]["fixing_code"] == FIXED
    )


def test_pairs_export_command(runs, tmp_path):
    app = typer.Typer()
    app.add_typer(pairs_app, name="pairs")
    result = CliRunner().invoke(
        app,
        [
            "pairs",
            "export",
            "--runs",
            str(runs / "r1-replay"),
            str(runs / "r2-model"),
            "--format",
            "jsonl",
            "--out",
            str(tmp_path / "p.jsonl"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "2 pair(s) from 2 run(s) (1 duplicate(s) removed, 2 skipped, 1 scripted)" in flat(
        result.output
    )
    bad = CliRunner().invoke(
        app,
        ["pairs", "export", "--runs", str(tmp_path / "nope"), "--out", str(tmp_path / "q.jsonl")],
    )
    assert bad.exit_code == 2 and "does not exist" in flat(bad.output)
    fmt = CliRunner().invoke(
        app,
        [
            "pairs",
            "export",
            "--runs",
            str(runs),
            "--format",
            "csv",
            "--out",
            str(tmp_path / "q.csv"),
        ],
    )
    assert fmt.exit_code == 2 and "unknown format" in flat(fmt.output)
