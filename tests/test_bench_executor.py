"""`kernforge bench --executor`: one executor, built by the bench from the flag and the judge.*
settings, judges the candidates of every run; the runs' events and the bench's say which. Flags
that cannot work are one-line usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from test_bench_runs import FAST, TORCH, any_call_script, bench_cli, events

from agents.api import run_device
from benchmarks.results.rows import ResultStore


def test_executor_flags_that_cannot_work_are_one_line_usage_errors(tmp_path: Path) -> None:
    llm = any_call_script(tmp_path / "torch.jsonl", TORCH)
    base = ["--tasks", "softmax_fp32", "--methods", "single-shot", "--llm", llm]
    base += ["--out", str(tmp_path / "b"), *FAST]
    unknown = bench_cli(*base, "--executor", "threads")
    assert (
        unknown.exit_code == 2
        and "--executor: unknown executor 'threads'; expected one of" in unknown.output
    )
    mixed = bench_cli(*base, "--executor", "local", "--ray-address", "head:6379")
    assert mixed.exit_code == 2 and "--ray-address goes with --executor ray" in mixed.output
    assert "Traceback" not in unknown.output + mixed.output
    assert not (tmp_path / "b" / "runs").exists()  # nothing ran


def test_every_run_of_a_bench_is_judged_on_its_one_shared_executor(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("KERNFORGE_JUDGE_COMPILE_WORKERS", "0")  # a judge.* setting the flag reads
    out = tmp_path / "bench"
    llm = any_call_script(tmp_path / "torch.jsonl", TORCH)
    args = ["--tasks", "softmax_fp32", "--methods", "single-shot,kernelagent", "--llm", llm]
    args += ["--budget", "iterations=1", "--out", str(out), "--executor", "local", *FAST]
    done = bench_cli(*args)
    assert done.exit_code == 0, done.output
    (start,) = [e for e in events(out / "events.jsonl") if e["event"] == "bench_start"]
    assert start["executor"] == "local: 1 CPU lane(s), 0 compile worker(s)"
    for run in sorted((out / "runs").iterdir()):
        said = [e for e in events(run / "events.jsonl") if e["event"] == "executor"]
        assert [(e["executor"], e["shared"]) for e in said] == [("local", True)], run.name
    rows = ResultStore(out).rows()
    assert sorted({r.method for r in rows}) == ["kernelagent", "single-shot"]
    verdict = json.loads(next((out / "runs").glob("*/attempts/1/verdict.json")).read_text())
    assert verdict["error_class"] != "harness_error", verdict["message"]


def test_without_the_flag_one_worker_shares_one_executor_of_the_settings_kind(
    tmp_path: Path, monkeypatch
) -> None:
    """No --executor: the bench still builds one executor for all its runs (their lanes and
    compile workers stay warm from task to task), of judge.executor's kind, sized by the plan's
    own --set values over the environment's."""
    monkeypatch.setenv("KERNFORGE_JUDGE_EXECUTOR", "local")
    monkeypatch.setenv("KERNFORGE_JUDGE_COMPILE_WORKERS", "3")  # the plan's --set wins
    out = tmp_path / "bench"
    llm = any_call_script(tmp_path / "torch.jsonl", TORCH)
    args = ["--tasks", "softmax_fp32", "--methods", "single-shot", "--llm", llm]
    args += ["--budget", "iterations=1", "--out", str(out), "--set", "judge.compile_workers=0"]
    done = bench_cli(*args, *FAST)
    assert done.exit_code == 0, done.output
    (start,) = [e for e in events(out / "events.jsonl") if e["event"] == "bench_start"]
    assert start["executor"] == "local: 1 CPU lane(s), 0 compile worker(s)"
    (run,) = sorted((out / "runs").iterdir())
    said = [e for e in events(run / "events.jsonl") if e["event"] == "executor"]
    assert [(e["executor"], e["shared"]) for e in said] == [("local", True)]


def test_a_run_judged_on_ray_may_ask_for_cuda_where_this_machine_has_no_gpu() -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: nothing to relax")
    assert run_device("cuda", "ray") == "cuda"  # the cluster's GPUs judge it
    assert run_device("auto", "ray") == "cpu"  # auto looks for a GPU here
    with pytest.raises(RuntimeError, match="no CUDA GPU here"):
        run_device("cuda", "local")
