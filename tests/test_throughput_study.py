"""The throughput study's CPU path (benchmarks/studies/throughput.py), tiny, on the interpreter:
its candidates are new kernels that still pass the static check, and it writes its table. Its
figures are GPU measurements, taken on the device and not asserted here."""

from __future__ import annotations

import pytest

from benchmarks.harness.static_check import check_source
from benchmarks.loading import get_task
from benchmarks.studies import throughput
from knowledge_base import solution_path


@pytest.mark.parametrize("name,task_id", [("silu", "silu_fp32"), ("matmul", "matmul_fp16")])
def test_each_variant_is_a_new_kernel_that_passes_the_static_check(name, task_id):
    task = get_task(task_id)
    source = solution_path(name).read_text()
    made = throughput.variants(source, 3, first=4)
    assert len(set(made)) == 3 and source not in made
    for k, text in enumerate(made, start=4):
        assert f"# throughput study: variant {k}" in text
        params = [p.name for p in task.signature().parameters.values()]
        found = check_source(
            text, entry_point=task.entry_point, params=params, forbidden=task.forbidden
        )
        assert found.ok, found.message


@pytest.mark.slow
def test_the_cpu_path_writes_its_table(tmp_path, capsys):
    out = tmp_path / "throughput.md"
    argv = ["--device", "cpu", "--tasks", "silu_fp32", "--batch", "1", "--naive", "1"]
    assert throughput.main([*argv, "--compile-workers", "1", "--out", str(out)]) == 0
    text = out.read_text()
    assert text in capsys.readouterr().out  # printed as written
    rows = [line for line in text.splitlines() if line.startswith("| silu_fp32 |")]
    assert [r.split(" | ")[1] for r in rows] == [
        "naive loop of `kernforge eval`",
        "local, 1 compile workers, cold",
        # before the warm pass: a cut keeps them
        "local, 1 compile workers, one warm evaluation (a new kernel)",
        "local, 1 compile workers, the same candidate judged again",
        "local, 1 compile workers, warm",
    ]
    assert "Median seconds of every judge stage, per pass:" in text
    assert all(r.split(" | ")[3] == "1" for r in rows)  # every candidate passed
    assert "bench wall time: not measured" in text and "no GPU" in text
    assert "one warm evaluation of a passing candidate: a new kernel" in text
    assert "the same candidate again" in text


def test_a_study_cut_short_keeps_the_passes_that_ended(tmp_path, monkeypatch, capsys):
    class Idle:
        def close(self) -> None:
            pass

    def interrupted(*args: object) -> throughput.Pass:
        raise KeyboardInterrupt

    monkeypatch.setattr(
        throughput, "naive_loop", lambda *a: throughput.Pass("naive loop", 2, 30.0, 2)
    )
    monkeypatch.setattr(throughput, "make_executor", lambda spec: Idle())
    monkeypatch.setattr(throughput, "executor_pass", interrupted)
    out = tmp_path / "throughput.md"
    argv = ["--device", "cpu", "--tasks", "silu_fp32", "--out", str(out)]
    assert throughput.main(argv) == 130
    text = out.read_text()
    assert "| silu_fp32 | naive loop | 2 | 2 | 30.0 | 4.0 | 1.00 | - |" in text
    assert "interrupted" in text and "interrupted" in capsys.readouterr().out


def test_a_pass_cut_short_says_how_far_it_got_and_where_the_time_went(monkeypatch):
    from concurrent.futures import Future

    from benchmarks.verdict import Verdict

    def verdict(k: int) -> Verdict:
        return Verdict(
            task_id="silu_fp32",
            candidate=f"variant {k}",
            device="cpu",
            passed=k != 1,
            stage_seconds={"total": 4.0 + k, "correctness": 2.0, "perf": 1.0},
        )

    class Half:
        def submit(self, request: object) -> Future:
            future: Future = Future()
            future.set_result(verdict(int(str(request))))
            return future

    def two_then_ctrl_c(futures):
        yield from list(futures)[:3]
        raise KeyboardInterrupt

    monkeypatch.setattr(throughput, "as_completed", two_then_ctrl_c)
    with pytest.raises(throughput.PassCutShort) as cut:
        throughput.executor_pass(Half(), "local, cold", [0, 1, 2, 3, 4])  # type: ignore[list-item]
    done = cut.value.done
    assert done.label == "local, cold (cut short: 3 of 5 came back)"
    assert (done.candidates, done.passed) == (3, 2)
    assert done.stages == {"total": 5.0, "correctness": 2.0, "perf": 1.0}
    assert throughput._stages_text(done.stages) == "total 5.00, correctness 2.00, perf 1.00"
