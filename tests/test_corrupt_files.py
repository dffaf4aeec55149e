"""Every file kernforge reads back, truncated or garbled: it recovers, or it fails with one line
that names the file and says what to do; never a traceback.

One offline run on the CPU is made once for the module; each test damages a copy of it (the
copy keeps the run's name: the checkpoint's thread is the run id). docs/reliability/files.md
lists the messages these tests pin.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agents import api
from agents.cli.main import app
from agents.core.rundir import RunDir
from benchmarks import RunFileError
from benchmarks.results.jsonl import append_line, read_jsonl
from benchmarks.results.rows import ResultRow, ResultStore, collect_rows

FAST = {"kb": "off", "judge.trials": 1, "offline.codegen": False}
ENV = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished offline run: one correct attempt, a checkpoint, events, a summary."""
    runs = tmp_path_factory.mktemp("made")
    result = api.run(
        "softmax_fp32", llm="offline", device="cpu", runs_dir=runs, settings=FAST, run_id="r",
        quiet=True,
    )  # fmt: skip
    assert result.finished and result.best_attempt == 1
    return result.run_dir


def copy(run: Path, where: Path) -> Path:
    """A copy of `run` under `where`, with the same name (so the checkpoint's thread matches)."""
    dst = where / run.name
    shutil.copytree(run, dst)
    return dst


def cut(path: Path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def cli(*args: str) -> object:
    return CliRunner().invoke(app, list(args), env={**ENV, "COLUMNS": "80"})


def one_line_error(result: object, code: int = 2) -> str:
    """The CLI's error message, checked to be one line, no traceback, the given exit code."""
    assert result.exit_code == code, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in result.output, result.output
    assert message.startswith("error: ")
    return message


# -- checkpoint.sqlite ---------------------------------------------------------------------------


def _garbage(path: Path) -> None:
    path.write_bytes(b"\x00garbage\xff" * 2000)


def _garbled_state(path: Path) -> None:
    with sqlite3.connect(path) as db:  # a valid database whose stored states do not decode
        db.execute("UPDATE checkpoints SET checkpoint = X'deadbeef00ff'")


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (_garbage, "sqlite: file is not a database"),
        (cut, "sqlite: database disk image is malformed"),
        (_garbled_state, "ValueError: unexpected end of file"),
    ],
    ids=["garbage", "cut-in-half", "garbled-state"],
)
def test_a_damaged_checkpoint_is_one_line_and_moving_it_aside_starts_over(
    finished: Path, tmp_path: Path, damage, says: str
) -> None:
    run = copy(finished, tmp_path)
    damage(run / "checkpoint.sqlite")
    message = one_line_error(cli("run", "--resume", str(run)))
    assert message == (
        f"error: {run}/checkpoint.sqlite: damaged checkpoint ({says}): the run cannot be resumed "
        "from it; its attempts on disk are kept (move the file aside to start this run over, "
        "or start a new run)"
    )
    if damage is not cut:
        return
    # what the message says to do works: the run starts over and takes its attempt back
    (run / "checkpoint.sqlite").rename(run / "checkpoint.sqlite.damaged")
    again = api.resume(run, quiet=True)
    assert again.finished and again.best_attempt == 1
    assert "attempt_recovered" in [e["event"] for e in RunDir(run).events()]


# -- manifest.json -------------------------------------------------------------------------------


def _without(key: str):  # noqa: ANN202 - a damage function
    def damage(path: Path) -> None:
        data = json.loads(path.read_text())
        del data[key]
        path.write_text(json.dumps(data))

    return damage


def _unknown_task(path: Path) -> None:
    data = json.loads(path.read_text())
    data["task"]["ref"] = "no_such_task"
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (cut, "not JSON ("),
        (lambda p: p.write_bytes(b"\xff\xfe{}"), "damaged: not UTF-8 text"),
        (lambda p: p.write_text("[1, 2]"), "not a JSON object (a list)"),
        (_without("config"), "no `config` (the run's settings): the run cannot be resumed"),
        (_unknown_task, "names task 'no_such_task', which this checkout cannot load"),
    ],
    ids=["cut-in-half", "not-utf8", "a-list", "no-config", "unknown-task"],
)
def test_a_damaged_manifest_is_one_line_naming_it(
    finished: Path, tmp_path: Path, damage, says: str
) -> None:
    run = copy(finished, tmp_path)
    damage(run / "manifest.json")
    message = one_line_error(cli("run", "--resume", str(run)))
    assert message.startswith(f"error: {run}/manifest.json: ") and says in message, message


# -- events.jsonl, pairs.jsonl (append-only) -----------------------------------------------------


def test_a_torn_last_event_is_skipped_with_a_warning_and_the_next_event_stands_alone(
    finished: Path, tmp_path: Path
) -> None:
    run = copy(finished, tmp_path)
    events = run / "events.jsonl"
    whole = events.read_text().splitlines()
    cut_at = len(events.read_bytes()) - len(whole[-1]) // 2 - 1  # half of the last line is gone
    events.write_bytes(events.read_bytes()[:cut_at])
    torn_line = len(whole)
    assert RunDir(run).damaged_lines() == [
        f"{events}:{torn_line}: torn last line skipped (cut short by a crash; the next line "
        "written starts on a fresh line)"
    ]

    result = cli("run", "--resume", str(run))  # a finished run: it says so, and warns
    assert result.exit_code == 0, result.output
    said = "".join(result.output.split())  # the note is wrapped to the terminal's width
    assert "".join(f"warning: {events}:{torn_line}: torn last line skipped".split()) in said

    lines = events.read_text().splitlines()
    assert lines[torn_line - 1] == whole[-1][: len(lines[torn_line - 1])]  # the torn text, alone
    resumed = json.loads(lines[torn_line])  # the next event: a line of its own
    assert resumed["event"] == "resume" and len(resumed["damaged_lines"]) == 1
    kinds = [e["event"] for e in RunDir(run).events()]
    assert kinds[-1] == "resume" and len(kinds) == len(whole)  # every whole line, the torn one out


def test_a_torn_pair_line_is_skipped_and_the_next_pair_is_appended_on_a_fresh_line(
    tmp_path: Path,
) -> None:
    run = RunDir(tmp_path)
    pair = {"failing": {"id": 1}, "fixing": {"id": 2}, "hops": 1}
    (tmp_path / "pairs.jsonl").write_text(json.dumps(pair) + "\n" + json.dumps(pair)[:20])
    assert [p["fixing"]["id"] for p in run.pairs()] == [2]
    assert "pairs.jsonl:2: torn last line skipped" in run.damaged_lines()[0]
    assert run.append_pair({"failing": {"id": 3}, "fixing": {"id": 4}})
    assert not run.append_pair(pair)  # already there: the dedupe still reads the file
    assert [p["fixing"]["id"] for p in run.pairs()] == [2, 4]


def test_append_line_never_glues_onto_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    append_line(path, '{"a": 1}')
    with path.open("ab") as f:
        f.write(b'{"b": ')  # a crash in mid-write
    append_line(path, '{"c": 3}')
    assert path.read_text() == '{"a": 1}\n{"b": \n{"c": 3}\n'
    records, warnings = read_jsonl(path)
    assert [r for _, r in records] == [{"a": 1}, {"c": 3}]
    assert warnings == [f"{path}:2: not JSON (Expecting value), line skipped"]


# -- attempts/<n>/attempt.json, verdict.json, summary.json ---------------------------------------


def test_a_damaged_attempt_record_is_not_taken_back_and_an_event_names_it(
    finished: Path, tmp_path: Path
) -> None:
    run_dir = copy(finished, tmp_path)
    run = RunDir(run_dir)
    key = run.read_attempt(1).key
    cut(run_dir / "attempts" / "1" / "attempt.json")
    with pytest.raises(RunFileError, match=r"attempts/1/attempt\.json: not an attempt record"):
        run.read_attempt(1)
    assert run.find_attempt(key) is None  # judged again; its folder is kept aside then
    (damaged,) = [e for e in run.events() if e["event"] == "damaged_file"]
    assert damaged["file"] == "attempts/1/attempt.json"


def test_a_damaged_verdict_is_one_error_naming_it_and_what_is_lost(
    finished: Path, tmp_path: Path
) -> None:
    run_dir = copy(finished, tmp_path)
    cut(run_dir / "attempts" / "1" / "verdict.json")
    with pytest.raises(RunFileError) as err:
        RunDir(run_dir).read_verdict(1)
    text = str(err.value)
    assert text.startswith(f"{run_dir}/attempts/1/verdict.json: not JSON (") and "\n" not in text
    assert text.endswith(
        "attempt 1's verdict is lost, so the run cannot go on from it (its other files are kept)"
    )


def test_a_damaged_summary_is_one_line_naming_it(finished: Path, tmp_path: Path) -> None:
    run = copy(finished, tmp_path)
    (run / "summary.json").write_text('{"finished": tr')
    message = one_line_error(cli("run", "--resume", str(run)))
    assert message.startswith(f"error: {run}/summary.json: not JSON (")
    assert message.endswith("move the file aside to go on without it)")
    (run / "summary.json").rename(run / "summary.json.damaged")  # as it says: it goes on
    result = cli("run", "--resume", str(run))
    assert result.exit_code == 0 and "had already finished" in result.output, result.output


# -- kernforge report ----------------------------------------------------------------------------


def test_report_on_a_folder_with_one_bad_run_reports_the_rest_and_names_it(
    finished: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    copy(finished, runs / "good")
    bad = copy(finished, runs / "bad-verdict")
    cut(bad / "attempts" / "1" / "verdict.json")
    worse = copy(finished, runs / "bad-attempt")
    (worse / "attempts" / "1" / "attempt.json").write_text('{"iteration": "one"}')
    result = cli("report", str(runs), "--out", str(tmp_path / "report"))
    assert result.exit_code == 0, result.output
    warnings = result.stderr.strip().splitlines()
    assert len(warnings) == 2, warnings
    assert warnings[0].startswith(
        f"warning: {worse} skipped: {worse}/attempts/1/attempt.json: not an attempt record: "
        "iteration"
    )
    assert warnings[1].startswith(
        f"warning: {bad} skipped: {bad}/attempts/1/verdict.json: not JSON ("
    )
    assert "1 rows from 1 source(s), 2 skipped (named above)" in result.stdout
    assert (tmp_path / "report" / "report.html").is_file()


def _row(attempt: int) -> ResultRow:
    return ResultRow(task_id="softmax_fp32", method="offline", attempt=attempt, passed=True)


def test_a_bad_results_line_names_file_and_line_and_a_torn_one_is_never_glued_onto(
    tmp_path: Path,
) -> None:
    store = ResultStore(tmp_path)
    store.extend([_row(1), _row(2)])
    lines = store.jsonl.read_text().splitlines()
    lines.insert(1, '{"task_id": "softmax_fp32", "attempt": "x"}')  # valid JSON, not a row
    store.jsonl.write_text("\n".join(lines) + "\n" + lines[-1][:30])  # and a torn last line
    again = ResultStore(tmp_path)
    assert [r.attempt for r in again.rows()] == [1, 2]
    assert again.warnings[0].startswith(f"{store.jsonl}:4: torn last line skipped")
    assert again.warnings[1].startswith(f"{store.jsonl}:2: not a result row, skipped (")
    assert again.append(_row(3))
    assert [r.attempt for r in ResultStore(tmp_path).rows()] == [1, 2, 3]  # 3 on its own line

    rows, _, skipped = collect_rows([store.jsonl])  # the file given to `kernforge report`
    assert [r.attempt for r in rows] == [1, 2, 3]
    assert sorted(s.split(": ")[0] for s in skipped) == [f"{store.jsonl}:2", f"{store.jsonl}:4"]
    result = cli("report", str(store.jsonl), "--out", str(tmp_path / "report"))
    assert result.exit_code == 0, result.output
    assert f"warning: {store.jsonl}:2: not a result row, skipped (" in result.stderr


def test_a_damaged_parquet_file_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "results.parquet"
    path.write_bytes(b"PAR1 not really")
    result = cli("report", str(path), "--out", str(tmp_path / "report"))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith(f"warning: {path} skipped: {path}: not a readable Parquet file (")
    assert lines[1] == f"error: no result rows in {path}"


# -- bench.json ----------------------------------------------------------------------------------


def test_a_damaged_bench_plan_is_one_line_naming_it(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    out.mkdir()
    (out / "bench.json").write_text('{"out": "x", "tasks": [')
    message = one_line_error(cli("bench", "--resume", "--out", str(out)))
    assert message.startswith(f"error: {out}/bench.json: not JSON (")
    assert message.endswith(
        f"move it aside and run the bench's command again with its flags (the runs in "
        f"{out}/runs are kept and taken up again)"
    )


def test_a_damaged_peaks_cache_is_ignored_with_a_warning(tmp_path: Path, monkeypatch) -> None:
    from profiling.peaks import cache_path, load_peaks

    monkeypatch.setenv("KERNFORGE_CACHE_DIR", str(tmp_path))
    path = cache_path("somekey")
    path.parent.mkdir(parents=True)
    path.write_text('{"schema": ')
    with pytest.warns(UserWarning, match=f"ignoring unreadable peaks cache {path}"):
        assert load_peaks("somekey") is None  # measured again


# -- the CLI's last handler ----------------------------------------------------------------------


def _main(monkeypatch, capsys, *argv: str) -> tuple[int, str]:
    from agents.cli.main import main

    monkeypatch.setattr(sys, "argv", ["kernforge", *argv])
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(SystemExit) as exited:
        main()
    return int(exited.value.code or 0), capsys.readouterr().err


def test_a_crash_inside_a_run_is_one_line_with_the_resume_command_and_the_trace_in_its_log(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    import agents.core.graph as graph

    def crash(state, ctx):  # noqa: ANN001, ANN202 - stands in for the retrieve node
        raise SystemError("AST constructor recursion depth mismatch (before=1, after=2)")

    monkeypatch.setattr(graph, "retrieve", crash)
    args = ["run", "--task", "softmax_fp32", "--llm", "offline", "--device", "cpu"]
    args += ["--kb", "off", "--runs-dir", str(tmp_path), "--run-id", "boom"]
    code, err = _main(monkeypatch, capsys, *args, "--set", "judge.trials=1")
    run = tmp_path / "boom"
    assert code == 1
    assert err.strip() == (
        "error: internal error in run boom: SystemError: AST constructor recursion depth mismatch "
        f"(before=1, after=2) (the full trace is in {run}/error.log); the run is kept: continue "
        f"with kernforge run --resume {run}"
    )
    log = (run / "error.log").read_text()
    assert "Traceback (most recent call last)" in log and "in crash" in log
    assert [e["event"] for e in RunDir(run).events()][-1] == "crashed"

    monkeypatch.undo()  # the bug fixed: the resume command given works
    resumed = api.resume(run, quiet=True, runs_dir=tmp_path)
    assert resumed.finished and resumed.best_attempt == 1


def test_an_unexpected_error_outside_a_run_is_one_line_and_a_log_under_the_runs_dir(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    import benchmarks

    def broken(paths):  # noqa: ANN001, ANN202
        return {}["rows"]

    monkeypatch.setattr(benchmarks, "collect_rows", broken)
    monkeypatch.setenv("KERNFORGE_RUNS_DIR", str(tmp_path / "runs"))
    code, err = _main(monkeypatch, capsys, "report", str(tmp_path))
    log = tmp_path / "runs" / "error.log"
    assert code == 1
    assert err.strip() == (
        f"error: internal error: KeyError: 'rows' (the full trace is in {log}; please report it)"
    )
    assert "Traceback (most recent call last)" in log.read_text()
    assert f"kernforge report {tmp_path}" in log.read_text()


def test_usage_errors_stay_typers_own(monkeypatch, capsys) -> None:
    code, err = _main(monkeypatch, capsys, "run", "--no-such-flag")
    assert code == 2 and "No such option: --no-such-flag" in err and "Traceback" not in err
