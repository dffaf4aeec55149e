"""`kernforge bench --workers N`: runs in several processes, one writer, nothing lost.

CPU only: workers are spawned processes (no GPU to pin); the replay script's kernel calls
torch.softmax, which the static check refuses, so each run is fast and its rows are known.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agents.bench import BenchError, make_plan, run_bench
from agents.bench.parallel import gpu_slots, task_groups
from agents.core.seams import Seams
from benchmarks.results.rows import ResultStore, read_parquet

ROOT = Path(__file__).resolve().parents[1]
TORCH = (ROOT / "tests" / "fixtures" / "agent" / "kernels" / "softmax_torch.py").read_text()
TASKS = "softmax_fp32,softmax_fp16,layernorm_fp32"


class EmptyKB:
    """A knowledge base with nothing in it (picklable: a worker gets a copy)."""

    def __call__(self) -> EmptyKB:
        return self

    def search(self, *args: Any, **kwargs: Any) -> list[Any]:
        return []


class DieOnOpen:
    """Opening the knowledge base ends the worker process at once, as a kill would."""

    def __call__(self) -> Any:
        os._exit(3)


def script(path: Path, n: int = 40) -> str:
    reply = json.dumps({"text": f"Here it is.\n\n```python\n{TORCH.rstrip()}\n```\n"})
    path.write_text((reply + "\n") * n)
    return f"replay:{path}"


def plan_for(out: Path, llm: str) -> Any:
    return make_plan(
        out,
        tasks=TASKS,
        methods="single-shot,kernelagent",
        llm=llm,
        budget="iterations=1",
        settings={"kb": "auto", "judge.trials": 1},
        device="cpu",
    )


def events(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines() if x]


def test_two_workers_give_the_rows_one_worker_gives(tmp_path: Path) -> None:
    llm = script(tmp_path / "torch.jsonl")
    serial = run_bench(plan_for(tmp_path / "serial", llm), seams=Seams(open_kb=EmptyKB()))
    seen: list[tuple[int, int, str]] = []
    parallel = run_bench(
        plan_for(tmp_path / "parallel", llm),
        seams=Seams(open_kb=EmptyKB()),
        workers=2,
        on_cell=lambda n, total, o: seen.append((n, total, o.cell.run_id)),
    )

    def key(rows: list[Any]) -> list[tuple]:
        return sorted((r.run_id, r.attempt, r.error_class, r.passed) for r in rows)

    serial_rows = ResultStore(tmp_path / "serial").rows()
    parallel_rows = ResultStore(tmp_path / "parallel").rows()
    assert len(serial_rows) == 3 * (1 + 4)  # single-shot one kernel, kernelagent four seeds
    assert key(parallel_rows) == key(serial_rows)
    assert len(read_parquet(tmp_path / "parallel" / "results.parquet")) == len(serial_rows)
    assert sorted(o.cell.run_id for o in parallel.outcomes) == sorted(
        o.cell.run_id for o in serial.outcomes
    )
    assert all(o.status == "ran" and o.rows_added == o.attempts for o in parallel.outcomes)
    # every cell reported once, counted 1..6 of 6
    assert [n for n, _, _ in seen] == list(range(1, 7)) and {t for _, t, _ in seen} == {6}
    # the events say which worker ran which cell; a task's cells stay on one worker
    ended = [e for e in events(tmp_path / "parallel") if e["event"] == "cell"]
    assert len(ended) == 6 and all("worker" in e for e in ended)
    by_task: dict[str, set] = {}
    for e in ended:
        by_task.setdefault(e["run_id"].split(".")[0], set()).add(e["worker"])
    assert all(len(w) == 1 for w in by_task.values())
    # a second call finds every run finished and adds nothing
    again = run_bench(
        plan_for(tmp_path / "parallel", llm), seams=Seams(open_kb=EmptyKB()), workers=2
    )
    assert {o.status for o in again.outcomes} == {"complete"}
    assert sum(o.rows_added for o in again.outcomes) == 0
    assert len(ResultStore(tmp_path / "parallel").rows()) == len(serial_rows)


def test_a_dead_worker_stops_its_cells_and_the_same_bench_resumes_them(tmp_path: Path) -> None:
    llm = script(tmp_path / "torch.jsonl")
    out = tmp_path / "bench"
    first = run_bench(plan_for(out, llm), seams=Seams(open_kb=DieOnOpen()), workers=2)
    assert {o.status for o in first.outcomes} == {"stopped"}
    assert all("bench worker ended" in o.message and "exit 3" in o.message for o in first.outcomes)
    assert ResultStore(out).rows() == []
    second = run_bench(plan_for(out, llm), seams=Seams(open_kb=EmptyKB()), workers=2)
    # the runs that had started resume from their checkpoints, the others start
    assert {o.status for o in second.outcomes} <= {"resumed", "ran"}
    assert "resumed" in {o.status for o in second.outcomes}
    assert len(ResultStore(out).rows()) == 3 * (1 + 4)


def test_the_deadline_defers_what_has_not_started(tmp_path: Path) -> None:
    import time

    llm = script(tmp_path / "torch.jsonl")
    result = run_bench(
        plan_for(tmp_path / "b", llm),
        seams=Seams(open_kb=EmptyKB()),
        workers=2,
        deadline=time.monotonic(),
    )
    assert {o.status for o in result.outcomes} == {"deferred"}
    assert len(result.outcomes) == 6


def test_one_worker_per_gpu_at_most(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert gpu_slots(2) == ["3", "5"]
    assert gpu_slots(1) == ["3"]
    with pytest.raises(BenchError, match="shows 2 GPU"):
        gpu_slots(3)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(BenchError, match="shows 0 GPU"):
        gpu_slots(1)


def test_workers_must_be_positive(tmp_path: Path) -> None:
    plan = plan_for(tmp_path / "b", script(tmp_path / "s.jsonl"))
    with pytest.raises(BenchError, match="--workers"):
        run_bench(plan, workers=0)


def test_a_tasks_cells_form_one_group_in_plan_order(tmp_path: Path) -> None:
    plan = plan_for(tmp_path / "b", script(tmp_path / "s.jsonl"))
    groups = task_groups(plan.cells())
    assert [g[0].task for g in groups] == TASKS.split(",")
    assert [c.method for c in groups[0]] == ["single-shot", "kernelagent"]


def test_the_cli_refuses_zero_workers_with_a_message(tmp_path: Path) -> None:
    from tests.test_bench_runs import bench_cli

    llm = script(tmp_path / "s.jsonl")
    args = ["--tasks", "softmax_fp32", "--methods", "single-shot", "--llm", llm]
    result = bench_cli(*args, "--out", str(tmp_path / "b"), "--device", "cpu", "--workers", "0")
    assert result.exit_code == 2
    assert "--workers must be >= 1" in result.output


def test_ctrl_c_stops_every_worker_and_the_bench_resumes(tmp_path: Path) -> None:
    """SIGINT to the bench's process group (Ctrl-C, `timeout -s INT`): exit 130, the runs left
    resumable, and the same command finishes them with one row set per run."""
    import signal
    import subprocess
    import sys
    import time

    from tests.test_bench_runs import BROKEN, FAST, any_call_script, bench_cli

    out = tmp_path / "bench"
    llm = any_call_script(tmp_path / "broken.jsonl", BROKEN)
    args = ["--tasks", "softmax_fp32,softmax_fp16", "--methods", "single-shot,geak"]
    args += ["--llm", llm, "--budget", "iterations=2", "--set", "agent.candidates=1"]
    args += ["--out", str(out), "--workers", "2", *FAST]
    # Ctrl-C as a terminal gives it, also where this test runs in the background (a shell
    # without job control starts background commands with SIGINT ignored, and Python then
    # installs no KeyboardInterrupt handler)
    code = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "import typer; from agents.cli.bench import bench; typer.run(bench)"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 240
    while not list((out / "runs").glob("*.geak.s0/attempts/1/verdict.json")):
        assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
        assert time.monotonic() < deadline, "no run judged a kernel"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    output = proc.communicate(timeout=120)[0].decode()
    assert proc.returncode == 130, output
    assert "interrupted" in output
    runs = [d for d in (out / "runs").iterdir() if not d.name.startswith(".")]
    unfinished = [d for d in runs if not (d / "summary.json").exists()]
    assert unfinished, "the interrupt came after every run had finished"

    resumed = bench_cli("--resume", "--out", str(out), "--workers", "2")
    assert resumed.exit_code == 0, resumed.output
    rows = ResultStore(out).rows()
    assert {r.run_id for r in rows} == {
        f"{t}.{m}.s0" for t in ("softmax_fp32", "softmax_fp16") for m in ("single-shot", "geak")
    }
    keys = [(r.run_id, r.attempt) for r in rows]
    assert len(keys) == len(set(keys))  # no run's rows stored twice
    runs = [d for d in (out / "runs").iterdir() if not d.name.startswith(".")]
    assert len(runs) == 4 and all((d / "summary.json").exists() for d in runs)
