"""The worked example (agents/bench/worked_example.py) end to end on the CPU: two lite tasks, every
method, the smallest budget. The offline policy's rows are real (CPU interpreter, speed not
measured); the model-driven presets run on the scripted replay and say so everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.bench import worked_example
from agents.bench.scripted_replies import script_entries, story_of
from benchmarks.results.rows import ResultStore
from benchmarks.suites import suite_tasks
from knowledge_base.snapshot import SnapshotKB

TASKS = "gelu_erf_fp16,attn_causal_prefill_fp16"  # stories "first try" and "cut off"


def _row_cells(markdown: str, task_ids: list[str]) -> list[list[str]]:
    """The cells of the report's "Every row" table (one line per judged kernel)."""
    rows = []
    for line in markdown.split("## Every row", 1)[1].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] in task_ids:
            rows.append(cells)
    return rows


@pytest.mark.slow
def test_the_worked_example_writes_a_labelled_report_readme_and_pairs_and_resumes(
    tmp_path: Path,
) -> None:
    out = tmp_path / "example"
    args = ["--device", "cpu", "--task-ids", TASKS, "--iterations", "2", "--out", str(out)]
    assert worked_example.main(args) == 0

    for name in (
        "README.md",
        "report.html",
        "report.md",
        "pairs/pairs.jsonl",
        "scripted_replies.jsonl",
    ):
        assert (out / name).is_file(), name
    rows = ResultStore(out / "bench").rows()
    assert {r.method for r in rows} == {"offline", "aka", "geak", "kernelagent", "single-shot"}
    assert all(r.scripted == (r.method != "offline") for r in rows)

    readme = (out / "README.md").read_text()
    assert "CPU only" in readme and "speed not measured (no GPU)" in readme
    assert "torch " in readme and "triton " in readme
    assert f"`python -m agents.bench.worked_example {' '.join(args)}`" in readme
    assert "SCRIPTED replies, not a model" in readme and "retrieval snapshot lite.json" in readme

    markdown = (out / "report.md").read_text()
    cells = _row_cells(markdown, TASKS.split(","))
    assert len(cells) == len(rows)
    for c in cells:  # columns: task, category, method, scripted, ...
        if c[2] == "offline":
            assert c[3] == "" and "[scripted]" not in " ".join(c)
        else:
            assert c[2].endswith(" [scripted]") and c[3] == "scripted"
    page = (out / "report.html").read_text()
    assert 'aka <span class="scripted">[scripted]</span>' in page
    assert "offline <span" not in page
    # the broken replies were repaired: error -> fix pairs, every one from a scripted run
    pairs = [json.loads(line) for line in (out / "pairs" / "pairs.jsonl").read_text().splitlines()]
    assert pairs and all(p["scripted"] for p in pairs)

    # the same command again: every run is complete, nothing is added
    before = (out / "bench" / "results.jsonl").read_bytes()
    assert worked_example.main(args) == 0
    assert (out / "bench" / "results.jsonl").read_bytes() == before
    assert [s["cells"] for s in worked_example.read_sessions(out)] == [
        {"ran": 10},
        {"complete": 10},
    ]
    sessions = worked_example.read_sessions(out)
    assert all(s["versions"]["torch"] and "revision" in s["git"] for s in sessions)
    # the second call ran nothing; its README names the call that ran each run
    readme = (out / "README.md").read_text()
    assert readme.count("| ran in session 1 |") == 10

    # --render: notes written by hand go in; nothing runs, no session is added
    (out / "NOTES.md").write_text("## What it shows (written by hand)\n\n- a note\n")
    assert worked_example.main(["--render", "--out", str(out)]) == 0
    readme = (out / "README.md").read_text()
    assert "- a note" in readme and readme.index("- a note") < readme.index("## Runs")
    assert readme.count("| ran in session 1 |") == 10
    assert len(worked_example.read_sessions(out)) == 2
    assert (out / "bench" / "results.jsonl").read_bytes() == before
    # the provenance is the recorded session's, not this machine's
    recorded = worked_example.read_sessions(out)
    assert recorded[-1]["fingerprint"]["device"] == "cpu"
    recorded[-1].update(
        device="cuda",
        fingerprint={
            "gpu_name": "TEST GPU",
            "sm_count": 7,
            "driver_version": "1",
            "cuda_version": "2",
        },
        versions={"torch": "9.9.9"},
    )
    (out / "sessions.jsonl").write_text("".join(json.dumps(s) + "\n" for s in recorded))
    assert worked_example.main(["--render", "--out", str(out)]) == 0
    readme = (out / "README.md").read_text()
    assert "- device: TEST GPU (7 SMs, driver 1, CUDA 2)" in readme
    assert "- versions: torch 9.9.9" in readme
    with pytest.raises(SystemExit, match="holds no worked example"):
        worked_example.main(["--render", "--out", str(tmp_path / "none")])

    # more tasks past the deadline: the new runs are deferred, and the README says so
    later = [*args[:3], TASKS + ",gelu_tanh_fp16", *args[4:], "--deadline", "0.001"]
    assert worked_example.main(later) == 0
    assert "**Incomplete** (deferred)" in (out / "README.md").read_text()
    assert worked_example.read_sessions(out)[-1]["cells"] == {"complete": 10, "deferred": 5}


def test_the_lite_snapshot_covers_every_lite_task_and_never_shows_a_task_its_own_kernel() -> None:
    snap = SnapshotKB(worked_example.SNAPSHOT)
    for task in suite_tasks("lite"):
        assert snap.covers(task) == [], (
            "re-record: python -m knowledge_base.snapshot --suite lite "
            "--out knowledge_base/snapshots/lite.json"
        )
        for k, kinds in ((5, ("kernel", "doc")), (4, ("kernel",))):
            hits = snap.search("", k=k, task=task, hidden_task=task.id, kinds=kinds)
            assert hits and all(h.id != f"kernel:{task.name}" for h in hits)
            assert all(h.metadata.get("derived_from_task") != task.name for h in hits)


def test_the_snapshot_refuses_searches_it_did_not_record() -> None:
    from knowledge_base.snapshot import SnapshotMiss

    snap = SnapshotKB(worked_example.SNAPSHOT)
    task = suite_tasks("lite")[0]
    with pytest.raises(SnapshotMiss):  # not hidden: benchmark mode was recorded, nothing else
        snap.search("", k=5, task=task, hidden_task=None)
    with pytest.raises(SnapshotMiss):
        snap.search("split-K", k=5, task=task, hidden_task=task.id)


def test_every_scripted_reply_says_it_is_scripted_and_each_task_gets_a_story() -> None:
    tasks = suite_tasks("lite")[:3]
    entries = script_entries(tasks, iterations=2)
    assert all("scripted" in e["text"] for e in entries)
    assert [story_of(i) for i in range(3)] == ["first try", "cut off", "fallback"]
    broken = [e for e in entries if "DELIBERATELY BROKEN" in e["text"]]
    assert {e["match"][0] for e in broken} == {"## Task " + t.id + " (" for t in tasks[1:]}


def test_the_readme_title_names_the_suite_or_counts_the_tasks():
    from types import SimpleNamespace

    from agents.bench.worked_example_readme import title
    from benchmarks import suite_tasks

    lite = [t.id for t in suite_tasks("lite")]
    serving = [t.id for t in suite_tasks("serving")]
    assert title(SimpleNamespace(tasks=lite, methods=["offline", "aka"])) == (
        "Worked example: the offline policy on the lite suite, beside the presets on scripted "
        "replies"
    )
    assert title(SimpleNamespace(tasks=serving, methods=["offline"])) == (
        "Worked example: the offline policy on the serving suite"
    )
    assert title(SimpleNamespace(tasks=lite[:3], methods=["offline"])).endswith(
        "on 3 tasks of the lite suite"
    )


def test_a_stated_code_revision_is_recorded_as_stated(monkeypatch) -> None:
    """On the GPU machine the copied tree's .git is older than the code it holds: the caller
    states the revision (KERNFORGE_CODE_REVISION) and the record says it was stated, not read."""
    import subprocess

    from agents.api import CODE_REVISION_ENV, _git

    monkeypatch.delenv(CODE_REVISION_ENV, raising=False)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent
    ).stdout.strip()
    read = _git()
    assert read["revision"] == head and "stated" not in read
    monkeypatch.setenv(CODE_REVISION_ENV, "b50c268")
    assert _git() == {"revision": "b50c268", "dirty": None, "stated": CODE_REVISION_ENV}
