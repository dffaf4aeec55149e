"""`kernforge bench`: every (task, method, seed) an agent run, one row per attempt, resumable.

CPU only: the judge runs through the Triton interpreter and the model is the replay provider,
with scripts whose entries carry no condition, so any call of any method gets the next reply.
A kernel calling torch.softmax is refused by the static check (fast); the known-bad softmax goes
through the child process (a few seconds), so only the kill test uses it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from agents.bench import BenchError, make_plan, merge_with_stored, run_bench
from agents.cli.bench import bench
from benchmarks.results.rows import RESULTS_JSONL, ResultStore, read_parquet

ROOT = Path(__file__).resolve().parents[1]
TORCH = (ROOT / "tests" / "fixtures" / "agent" / "kernels" / "softmax_torch.py").read_text()
BROKEN = (ROOT / "tests" / "known_bad" / "softmax.py").read_text()
FAST = ["--set", "kb=off", "--set", "judge.trials=1", "--device", "cpu"]

app = typer.Typer()
app.command()(bench)


def any_call_script(path: Path, code: str, n: int = 40) -> str:
    """A replay script every method can use: n identical replies, no conditions."""
    reply = json.dumps({"text": f"Here it is.\n\n```python\n{code.rstrip()}\n```\n"})
    path.write_text((reply + "\n") * n)
    return f"replay:{path}"


def bench_cli(*args: str) -> object:
    env = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": "", "COLUMNS": "120"}
    return CliRunner().invoke(app, list(args), env=env)


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_two_methods_write_a_row_per_attempt_labelled_scripted_and_a_rerun_skips_them(
    tmp_path: Path,
) -> None:
    out = tmp_path / "bench"
    llm = any_call_script(tmp_path / "torch.jsonl", TORCH)
    args = ["--tasks", "softmax_fp32", "--methods", "single-shot,kernelagent", "--llm", llm]
    args += ["--budget", "iterations=2", "--out", str(out), *FAST]
    first = bench_cli(*args)
    assert first.exit_code == 0, first.output
    rows = ResultStore(out).rows()
    # single-shot: one kernel; kernelagent: four seeds refined once = eight, all refused
    assert sorted((r.method, r.attempt) for r in rows) == [
        ("kernelagent", i) for i in range(1, 9)
    ] + [("single-shot", 1)]
    assert {(r.task_id, r.seed, r.error_class) for r in rows} == {
        ("softmax_fp32", 0, "forbidden_api")
    }
    assert all(r.scripted and r.label().endswith("[scripted]") for r in rows)
    assert {r.model for r in rows} == {"replay:scripted:torch.jsonl"}
    assert {r.run_id for r in rows} == {
        "softmax_fp32.single-shot.s0",
        "softmax_fp32.kernelagent.s0",
    }
    assert len(read_parquet(out / "results.parquet")) == 9
    assert "single-shot [scripted]" in first.output and "0/1" in first.output
    assert "speed not measured" in first.output
    plan = json.loads((out / "bench.json").read_text())
    assert plan["methods"] == ["single-shot", "kernelagent"] and plan["budget"] == {
        "budget.iterations": 2
    }

    # the same command again: nothing runs, nothing is added
    before = (out / RESULTS_JSONL).read_bytes()
    run_events = {p.name: (p / "events.jsonl").read_bytes() for p in (out / "runs").iterdir()}
    again = bench_cli(*args)
    assert again.exit_code == 0, again.output
    assert (out / RESULTS_JSONL).read_bytes() == before
    assert {
        p.name: (p / "events.jsonl").read_bytes() for p in (out / "runs").iterdir()
    } == run_events
    cells = [e for e in events(out / "events.jsonl") if e["event"] == "cell"]
    assert [e["status"] for e in cells] == ["ran", "ran", "complete", "complete"]
    assert "complete 1 attempt(s)" in again.output


def test_offline_llm_skips_the_methods_that_need_a_model(tmp_path: Path) -> None:
    out = tmp_path / "offline"
    result = bench_cli(
        "--tasks", "softmax_fp32", "--methods", "aka,offline", "--llm", "offline",
        "--out", str(out), *FAST, "--set", "offline.codegen=false",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "method aka needs a model and --llm is offline: skipped" in result.output
    (row,) = ResultStore(out).rows()
    # hidden provenance, no knowledge base and no generated kernel: the policy has nothing to
    # start from, and that failure still counts as a row
    assert (row.method, row.attempt, row.error_class, row.scripted) == (
        "offline",
        0,
        "no_kernel",
        False,
    )
    assert (
        "no reference kernel" in row.message and not (out / "runs" / "softmax_fp32.aka.s0").exists()
    )


def test_a_bench_folder_refuses_rows_of_another_model_or_budget(tmp_path: Path) -> None:
    llm = any_call_script(tmp_path / "s.jsonl", TORCH)
    plan = make_plan(tmp_path / "b", tasks="softmax_fp32", methods="single-shot", llm=llm)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "bench.json").write_text(json.dumps(plan.to_json()))
    more = make_plan(tmp_path / "b", tasks="softmax_fp32", methods="geak", seeds=2, llm=llm)
    merged = merge_with_stored(more)  # more methods and seeds: fine, the plan grows
    assert merged.methods == ["single-shot", "geak"] and merged.seeds == [0, 1]
    other = make_plan(
        tmp_path / "b", tasks="softmax_fp32", methods="single-shot", llm=llm, budget="iterations=3"
    )
    with pytest.raises(BenchError, match="budget"):
        merge_with_stored(other)
    with pytest.raises(BenchError, match="unknown method"):
        make_plan(tmp_path / "c", tasks="softmax_fp32", methods="reflexion", llm=llm)
    with pytest.raises(BenchError, match="the bench sets method"):
        make_plan(tmp_path / "c", tasks="softmax_fp32", llm=llm, settings={"method": "aka"})
    missing = bench_cli("--resume", "--out", str(tmp_path / "nothing"))
    assert missing.exit_code == 2 and "holds no bench.json" in missing.output


def test_a_bench_folder_renamed_or_moved_still_resumes_with_its_own_replay(tmp_path: Path) -> None:
    """The worked example keeps its replay script beside bench/: renaming the folder (or moving
    it to another checkout) changes the script's path but not the model; a script elsewhere, or
    another script, is another model."""
    first = tmp_path / "example_a"
    (first / "bench").mkdir(parents=True)
    llm = any_call_script(first / "replies.jsonl", TORCH)
    plan = make_plan(first / "bench", tasks="softmax_fp32", methods="single-shot", llm=llm)
    (first / "bench" / "bench.json").write_text(json.dumps(plan.to_json()))
    moved = tmp_path / "elsewhere" / "example_b"
    moved.parent.mkdir()
    first.rename(moved)
    again = make_plan(
        moved / "bench", tasks="softmax_fp32", methods="single-shot",
        llm=f"replay:{moved / 'replies.jsonl'}",
    )  # fmt: skip
    assert merge_with_stored(again).methods == ["single-shot"]
    other = any_call_script(moved / "other.jsonl", TORCH)
    with pytest.raises(BenchError, match="llm"):
        merge_with_stored(
            make_plan(moved / "bench", tasks="softmax_fp32", methods="single-shot", llm=other)
        )


def test_a_killed_bench_continues_where_it_stopped(tmp_path: Path) -> None:
    from llm_servers import FakeLLMServer, openai_reply

    out = tmp_path / "bench"
    second = out / "runs" / "softmax_fp32.geak.s0"
    first_verdict = second / "attempts" / "1" / "verdict.json"
    killed = False
    reply = f"Here it is.\n\n```python\n{BROKEN.rstrip()}\n```\n"
    with FakeLLMServer("openai") as server:
        for _ in range(40):
            server.answer(200, openai_reply(reply))
        # once the second run has judged its first kernel, its next model call waits: the kill
        # below lands while that run is in the middle, never after it finished (no race)
        server.hold_while(lambda: not killed and first_verdict.is_file())
        llm = f"openai-compatible:{server.base_url}#m"
        args = ["--tasks", "softmax_fp32", "--methods", "single-shot,geak", "--llm", llm]
        args += ["--budget", "iterations=2", "--set", "agent.candidates=1", "--out", str(out)]
        code = "import typer; from agents.cli.bench import bench; typer.run(bench)"
        env = {
            k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
        }
        proc = subprocess.Popen(
            [sys.executable, "-c", code, *args, *FAST],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 240
        while not server.held:
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
            assert time.monotonic() < deadline, "the second run never reached its held model call"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        killed = True
        assert not (second / "summary.json").exists()
        stored = [(r.method, r.attempt) for r in ResultStore(out).rows()]
        assert stored == [("single-shot", 1)]  # the first run's row, written when it finished

        # `--resume` takes the plan from bench.json: the finished run is skipped, the killed
        # one resumed
        resumed = bench_cli("--resume", "--out", str(out))
    assert resumed.exit_code == 0, resumed.output
    cells = [e for e in events(out / "events.jsonl") if e["event"] == "cell"]
    assert [(e["run_id"], e["status"]) for e in cells] == [
        ("softmax_fp32.single-shot.s0", "ran"),
        ("softmax_fp32.single-shot.s0", "complete"),
        ("softmax_fp32.geak.s0", "resumed"),
    ]
    rows = ResultStore(out).rows()
    assert sorted((r.method, r.attempt) for r in rows) == [
        ("geak", 1),
        ("geak", 2),
        ("single-shot", 1),
    ]
    geak_events = [e["event"] for e in events(second / "events.jsonl")]
    assert "resume" in geak_events and geak_events[-1] == "finish"
    first_events = [
        e["event"] for e in events(out / "runs" / "softmax_fp32.single-shot.s0" / "events.jsonl")
    ]
    assert first_events.count("start") == 1 and "resume" not in first_events
    assert "geak" in resumed.output and "single-shot" in resumed.output


def test_no_run_starts_after_the_deadline_and_the_rest_are_deferred(tmp_path: Path) -> None:
    llm = any_call_script(tmp_path / "torch.jsonl", TORCH)
    plan = make_plan(
        tmp_path / "b", tasks="softmax_fp32", methods="single-shot,geak", llm=llm, device="cpu"
    )
    result = run_bench(plan, deadline=time.monotonic())
    assert [o.status for o in result.outcomes] == ["deferred", "deferred"]
    assert result.deferred == result.outcomes and not (tmp_path / "b" / "runs").exists()
    assert ResultStore(tmp_path / "b").rows() == []
    assert events(tmp_path / "b" / "events.jsonl")[-1]["deferred"] == 2


def test_a_run_that_judged_nothing_keeps_its_device(tmp_path: Path) -> None:
    """A no-kernel row names the device the run was set up on (its manifest's fingerprint), not
    the CPU interpreter by default: an H200 bench once reported such rows as CPU rows."""
    from agents.bench import Cell, cell_rows

    run = tmp_path / "softmax_fp32.offline.s0"
    (run / "attempts").mkdir(parents=True)
    manifest = {
        "task": {"id": "softmax_fp32"},
        "llm": "offline",
        "device": {"requested": "cuda", "resolved": "cuda"},
        "fingerprint": {"device": "cuda", "gpu_name": "NVIDIA H200", "key": "h200-key"},
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    (run / "summary.json").write_text(
        json.dumps({"finished": True, "finish_reason": "offline policy: nothing to start from"})
    )
    (row,) = cell_rows(run, Cell("softmax_fp32", "offline", 0))
    assert (row.device, row.device_key, row.error_class) == ("NVIDIA H200", "h200-key", "no_kernel")
    assert "nothing to start from" in row.message
