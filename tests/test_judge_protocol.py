"""The judge's side of the worker protocol: whatever the candidate's process writes into the
worker's folder (it shares that process), a malformed or out-of-protocol message ends in a
harness_error verdict that says what was wrong, never in a crash of the judge.

The worker here is scripted: its progress lines and result are written by the test, and its
process has already exited, so each case runs in a fraction of a second."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from benchmarks.harness import messages as m
from benchmarks.harness.child import Child, OpStream
from benchmarks.harness.judge import JudgeConfig, _run_candidate
from benchmarks.harness.transport import write_trial
from benchmarks.harness.worker import trial_plan
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass, Verdict

TASK = get_task("softmax_fp32")
SHAPES = TASK.shapes_for("cpu")
CONFIG = JudgeConfig(device="cpu", trials=1, timeout_s=30)


def _scripted_child(
    folder: Path, lines: list[bytes], result: bytes | None, piped: tuple[bytes, ...] = ()
) -> Child:
    """A Child whose (already finished) worker wrote `lines`, `result` and, on its op pipe,
    the compute op names `piped`."""
    (folder / "progress.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    if result is not None:
        (folder / "result.json").write_bytes(result)
    child = Child.__new__(Child)
    child.folder, child.device = folder, "cpu"
    child._out = open(folder / "stdout.txt", "wb")  # noqa: SIM115
    child._err = open(folder / "stderr.txt", "wb")  # noqa: SIM115
    child.proc = subprocess.Popen([sys.executable, "-c", "pass"])
    child.proc.wait()
    child._pos, child.events = 0, []
    read, write = os.pipe()
    os.write(write, b"".join(name + b"\n" for name in piped))
    os.close(write)  # the worker has exited: its op pipe is closed
    child.ops = OpStream(read)
    child.ops.closed.wait(5)
    return child


def _judge(tmp_path: Path, lines: list[bytes], result: bytes | None = None) -> Verdict:
    job = m.CandidateJob(
        task_path=str(TASK.path),
        dtype=TASK.dtype,
        candidate_path=str(tmp_path / "candidate.py"),
        device="cpu",
        shapes=[m.ShapeSpec(name=s.name, dims=dict(s.dims)) for s in SHAPES],
        modes=list(TASK.modes),
        trials=1,
        seed=0,
        perf=False,
    )
    verdict = Verdict(task_id=TASK.id, candidate="scripted", device="cpu")
    child = _scripted_child(tmp_path, lines, result)
    return _run_candidate(verdict, TASK, child, job, SHAPES, CONFIG)


START = [m.dump(m.StartEvent(t=1.0, pid=1, protocol=m.PROTOCOL_VERSION)).encode()]
IMPORTED = [*START, m.dump(m.ImportEvent(t=1.1)).encode()]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (b'{"event": "all_trials_passed", "t": 2.0}', "unknown event 'all_trials_passed'"),
        (b"<<not json>>", "not valid JSON"),
        (b'{"event": "call", "t": 2.0, "n": "zero"}', "field 'n': expected int"),
        (
            b'{"event": "trial", "t": 2.0, "n": 99999, "file": "trial_99999.json", "call_s": 0.1}',
            "not in the plan",
        ),
        (
            m.dump(m.StartEvent(t=1.0, pid=1, protocol=m.PROTOCOL_VERSION + 1)).encode(),
            f"protocol {m.PROTOCOL_VERSION + 1}",
        ),
    ],
)
def test_a_malformed_or_unknown_progress_line_is_a_harness_verdict(tmp_path, line, says):
    verdict = _judge(tmp_path, [*IMPORTED, line])
    assert verdict.error_class == ErrorClass.HARNESS_ERROR and not verdict.passed
    assert "broke the worker protocol" in verdict.message and says in verdict.message
    assert "harness_error" in verdict.flags


def test_a_trial_line_naming_another_file_is_refused_and_the_file_left_alone(tmp_path):
    # the judge reads a trial's files and deletes them: a forged name must not reach outside
    victim = tmp_path / "victim.json"
    victim.write_text("{}")
    worker = tmp_path / "worker"
    worker.mkdir()
    line = m.dump(m.TrialEvent(t=2.0, n=0, file=str(victim), call_s=0.1)).encode()
    verdict = _judge(worker, [*IMPORTED, line])
    assert verdict.error_class == ErrorClass.HARNESS_ERROR
    assert "not in the plan" in verdict.message and "victim.json" in verdict.message
    assert victim.exists()


def test_a_repeated_trial_line_is_refused(tmp_path):
    # trial 0 shipped with the reference's own outputs: it passes, so the second copy of its
    # line is what the judge refuses
    shapes = [m.ShapeSpec(name=s.name, dims=dict(s.dims)) for s in SHAPES]
    first = trial_plan(shapes, list(TASK.modes), 1, 0)[0]
    gen = torch.Generator().manual_seed(first.seed)
    args = TASK.make_inputs(first.dims, first.mode, gen)
    want = TASK.reference_for(first.dims)(*args)
    write_trial(tmp_path, "trial_0", want, want, [], args, args)
    line = m.dump(m.TrialEvent(t=2.0, n=0, file="trial_0.json", call_s=0.1)).encode()
    verdict = _judge(tmp_path, [*IMPORTED, line, line])
    assert verdict.error_class == ErrorClass.HARNESS_ERROR
    assert "seen before: True" in verdict.message


@pytest.mark.parametrize(
    ("result", "says"),
    [
        (b'{"status": "passed, trust me"}', "field 'status'"),
        (b'{"status": "error", "error_class": "none", "message": "x"}', "field 'error_class'"),
        (b"[1, 2, 3]", "a JSON list, not an object"),
        (b'{"status": "ok", "launches_total": {"_k": "lots"}}', "field 'launches_total'"),
        (b'{"status": "ok", "verdict": "passed"}', "unknown field(s) verdict"),
        (b"{truncated", "not valid JSON"),
    ],
)
def test_a_malformed_result_is_a_harness_verdict(tmp_path, result, says):
    verdict = _judge(tmp_path, IMPORTED, result)
    assert verdict.error_class == ErrorClass.HARNESS_ERROR and not verdict.passed
    assert "malformed result.json" in verdict.message and says in verdict.message
    assert "harness_error" in verdict.flags


def test_a_valid_error_result_keeps_its_error_class(tmp_path):
    result = m.CandidateResult()
    result.fail("import_error", "importing the candidate failed: SyntaxError")
    verdict = _judge(tmp_path, IMPORTED, m.dump(result).encode())
    assert verdict.error_class == ErrorClass.IMPORT_ERROR
    assert verdict.message == "importing the candidate failed: SyntaxError"
