"""Result rows and their store: append, resume, Parquet round trip, rows read from a run directory."""

import json

from result_rows import cpu_row, row

from benchmarks.results.rows import (
    ResultRow,
    ResultStore,
    collect_rows,
    read_parquet,
    rows_from_run_dir,
    write_parquet,
)


def test_append_skips_a_key_already_stored_and_survives_reopening(tmp_path):
    store = ResultStore(tmp_path)
    assert store.append(row("softmax_fp32", "aka", seed=1, attempt=2, speedup=1.5))
    assert not store.append(
        row("softmax_fp32", "aka", seed=1, attempt=2, speedup=9.9)
    )  # same key: kept the first
    assert store.append(row("softmax_fp32", "aka", seed=1, attempt=3))
    again = ResultStore(tmp_path)
    assert len(again) == 2
    assert again.has("softmax_fp32", "aka", 1, 2) and not again.has("softmax_fp32", "geak", 1, 2)
    assert again.rows()[0].geomean_speedup_eager == 1.5


def test_a_row_cut_short_by_a_crash_is_skipped_with_a_warning(tmp_path):
    store = ResultStore(tmp_path)
    store.append(row("a"))
    with store.jsonl.open("a") as f:
        f.write('{"task_id": "b", "meth')  # the process died mid-line
    again = ResultStore(tmp_path)
    assert [r.task_id for r in again.rows()] == ["a"]
    assert again.warnings and ":2:" in again.warnings[0]


def test_parquet_round_trip_keeps_nested_parts(tmp_path):
    rows = [
        row(
            "a",
            speedup=2.0,
            shapes=[{"shape": "s", "speedup_eager": 2.0}],
            ptx_features={"wgmma": True},
            verdict={"task_id": "a", "flags": ["x"]},
        ),
        cpu_row("b", passed=False, scripted=True),
    ]
    store = ResultStore(tmp_path)
    assert store.extend(rows) == 2
    back = read_parquet(store.parquet)
    assert [r.model_dump() for r in back] == [r.model_dump() for r in rows]


def test_empty_store_still_writes_a_parquet_file(tmp_path):
    write_parquet([], tmp_path / "r.parquet")
    assert read_parquet(tmp_path / "r.parquet") == []


def test_without_pyarrow_the_jsonl_file_stays_the_record_and_a_warning_says_so(
    tmp_path, monkeypatch
):
    from benchmarks.results import rows as results

    def missing():
        raise results.MissingPyarrow("writing or reading Parquet needs pyarrow")

    monkeypatch.setattr(results, "_pyarrow", missing)
    store = ResultStore(tmp_path)
    assert store.extend([row("a")]) == 1
    assert not store.parquet.exists() and len(ResultStore(tmp_path)) == 1
    assert (
        "not written" in store.warnings[0] and "results.jsonl holds every row" in store.warnings[0]
    )


def test_scripted_rows_are_labelled():
    assert row(method="aka", scripted=True).label() == "aka [scripted]"
    assert row(method="aka").label() == "aka"


def _run_dir(root, run_id, llm, attempts):
    run = root / run_id
    (run / "attempts").mkdir(parents=True)
    (run / "manifest.json").write_text(
        json.dumps(
            {
                "run_id": run_id,
                "created": "2026-01-01T00:00:00+00:00",
                "task": {"id": "softmax_fp32"},
                "llm": llm,
                "config": {"method": "aka", "seed": 3, "llm": llm},
                "fingerprint": {"device": "cpu", "key": "k"},
            }
        )
    )
    for attempt_id, parent, iteration, verdict in attempts:
        folder = run / "attempts" / str(attempt_id)
        folder.mkdir()
        (folder / "attempt.json").write_text(
            json.dumps(
                {
                    "id": attempt_id,
                    "parent_id": parent,
                    "iteration": iteration,
                    "mode": "repair" if parent else "fresh",
                }
            )
        )
        (folder / "verdict.json").write_text(
            json.dumps(
                {
                    "task_id": "softmax_fp32",
                    "device": "cpu",
                    "fingerprint": {"device": "cpu", "key": "k"},
                    **verdict,
                }
            )
        )
    return run


def test_rows_from_a_run_directory_carry_the_attempt_tree_and_the_scripted_flag(tmp_path):
    run = _run_dir(
        tmp_path,
        "r1",
        "replay:scripted:x.jsonl",
        [
            (
                1,
                None,
                1,
                {
                    "passed": False,
                    "stage_reached": "correct_standard",
                    "error_class": "nan_inf_mismatch",
                },
            ),
            (
                2,
                1,
                2,
                {
                    "passed": True,
                    "stage_reached": "no_fallback",
                    "perf_status": "not measured (no GPU)",
                },
            ),
        ],
    )
    rows = rows_from_run_dir(run)
    assert [(r.attempt, r.parent_attempt, r.iteration, r.passed) for r in rows] == [
        (1, None, 1, False),
        (2, 1, 2, True),
    ]
    assert all(
        r.scripted and r.method == "aka" and r.seed == 3 and r.category == "normalization"
        for r in rows
    )
    assert rows[0].error_class == "nan_inf_mismatch" and rows[1].device.startswith("cpu")
    assert rows[1].ptx_features is None  # no PTX in the folder: not measured


def test_collect_rows_reads_stores_runs_and_files(tmp_path):
    _run_dir(
        tmp_path / "runs",
        "r1",
        "offline",
        [(1, None, 1, {"passed": True, "stage_reached": "no_fallback"})],
    )
    store = ResultStore(tmp_path / "bench")
    store.extend([row("a"), row("b")])
    write_parquet([row("c"), row("d")], tmp_path / "other.parquet")
    rows, sources, skipped = collect_rows(
        [tmp_path / "runs", tmp_path / "bench", tmp_path / "other.parquet"]
    )
    assert len(rows) == 1 + 2 + 2
    assert len(sources) == 3 and skipped == []
    assert not rows[0].scripted  # offline is not scripted
    assert isinstance(rows[0], ResultRow)


def test_rows_read_twice_are_kept_once(tmp_path):
    """A store given along with its own Parquet file (or a folder with a folder inside it) must
    not count its runs twice."""
    store = ResultStore(tmp_path / "bench")
    store.extend([row("a"), row("b")])
    rows, sources, _ = collect_rows([tmp_path / "bench", store.parquet])
    assert sorted(r.task_id for r in rows) == ["a", "b"]
    assert sources[-1] == "2 row(s) read twice, kept once"
