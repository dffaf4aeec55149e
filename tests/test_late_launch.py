"""A Triton launch after the candidate's call returned and before the worker shipped its outputs
fails the trial (`trace_evaded`): code a candidate leaves behind (a gc callback, a finalizer, a
hook fired by the worker's own events) could rewrite an output there with a Python-computed
answer and a Triton copy, and nothing else would see it. Checked in-process, on the GPU where
there is one (compiled kernels) and on the CPU interpreter elsewhere, the late launch made by the
trial writer's stand-in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

from benchmarks.harness import transport, worker
from benchmarks.harness.fallback import TritonLaunchCounter
from benchmarks.harness.messages import CandidateResult, Trial, TrialEvent
from benchmarks.loading import get_task


@triton.jit
def _scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def _candidate(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    _scale[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y


def judge_takes(folder: Path) -> Callable[[object], None]:
    """A progress sink that does what the judge does with a trial's line: take its files (the
    worker waits for that before anything of the candidate's may run again)."""

    def take(event: object) -> None:
        file = getattr(event, "file", None)
        if isinstance(event, TrialEvent) and file:
            for path in (folder / file, (folder / file).with_suffix(".bin")):
                path.unlink(missing_ok=True)

    return take


@pytest.mark.parametrize("late", [0, 1])
def test_a_launch_between_the_call_and_the_shipped_outputs_fails_the_trial(
    late: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = get_task("softmax_fp32")
    counter = TritonLaunchCounter()
    counter.install()
    written = transport.write_trial

    def write_after_a_late_launch(*args, **kwargs):  # what a gc callback could do first
        for _ in range(late):
            _candidate(torch.ones(8, device=DEVICE))
        return written(*args, **kwargs)

    monkeypatch.setattr(transport, "write_trial", write_after_a_late_launch)
    try:
        result = CandidateResult()
        runner = worker._TrialRunner(task, DEVICE, counter, tmp_path, judge_takes(tmp_path), result)
        item = Trial(
            n=0, shape="s", dims={"M": 3, "N": 20}, mode="standard", trial=0, seed=1, first=True
        )
        ok = runner.run(item, _candidate)
    finally:
        counter.uninstall()
    if late:
        assert not ok and result.error_class == "trace_evaded"
        assert "1 Triton launch(es) ran after the candidate's call had returned" in result.message
    else:
        assert ok, result.message
        assert sum(counter.launches.values()) == 2  # the call and its repeat


CTYPES_SCRIPT = """
import ctypes, sys, tempfile
from pathlib import Path
import torch
from benchmarks.harness import probes, transport, worker
from benchmarks.harness.fallback import TritonLaunchCounter
from benchmarks.harness.messages import CandidateResult, Trial
from benchmarks.loading import get_task
from tests.test_late_launch import _candidate, judge_takes

probes.install()  # the audit hook, as in the worker (this process only)
counter = TritonLaunchCounter()
counter.install()
written = transport.write_trial
late = sys.argv[1] == "1"

def write_after_a_raw_write(folder, name, out, *rest):  # what a finalizer could do first
    if late:
        try:
            (ctypes.c_float * out.numel()).from_address(out.data_ptr())[0] = 0.0
        except probes.NativeAccessRefused:
            pass  # refused, as a candidate's hook would see it
    return written(folder, name, out, *rest)

transport.write_trial = write_after_a_raw_write
result = CandidateResult()
folder = Path(tempfile.mkdtemp())
runner = worker._TrialRunner(
    get_task("softmax_fp32"), "cpu", counter, folder, judge_takes(folder), result
)
item = Trial(n=0, shape="s", dims={"M": 3, "N": 20}, mode="standard", trial=0, seed=1, first=True)
print(runner.run(item, _candidate), result.error_class, result.message)
"""


@pytest.mark.parametrize("late", [0, 1])
def test_a_raw_memory_write_before_the_outputs_are_shipped_is_refused(late: int) -> None:
    """ctypes' raw-memory events are refused from the first call until the outputs are shipped,
    not only inside the call (in a subprocess: the probes' audit hook cannot be removed)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", CTYPES_SCRIPT, str(late)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    line = done.stdout.strip().splitlines()[-1]
    if late:
        assert line.startswith("False trace_evaded memory was reached by address"), line
        assert "ctypes.cdata" in line, line
    else:
        assert line.startswith("True"), line


WINDOW_SCRIPT = """
import gc, signal, tempfile
from pathlib import Path
from benchmarks.harness import probes, transport, worker
from benchmarks.harness.fallback import TritonLaunchCounter
from benchmarks.harness.messages import CandidateResult, Trial
from benchmarks.loading import get_task
from tests.test_late_launch import _candidate, judge_takes

probes.install()
counter = TritonLaunchCounter()
counter.install()
written = transport.write_trial
seen = []

def write_noting_the_collector(*args, **kwargs):  # where a gc callback would have fired
    seen.append(gc.isenabled())
    return written(*args, **kwargs)

transport.write_trial = write_noting_the_collector
folder = Path(tempfile.mkdtemp())
runner = worker._TrialRunner(
    get_task("softmax_fp32"), "cpu", counter, folder, judge_takes(folder), CandidateResult()
)
item = Trial(n=0, shape="s", dims={"M": 3, "N": 20}, mode="standard", trial=0, seed=1, first=True)
inside = []

def candidate(*args):  # whether the collector runs inside the call
    inside.append(gc.isenabled())
    return _candidate(*args)

ok = runner.run(item, candidate)
after = gc.isenabled()
gc.enable()  # outside a call: refused, the collector stays off
try:
    signal.signal(signal.SIGALRM, lambda *a: None)
    handler = "installed"
except probes.HookRefused:
    handler = "refused"
signal.signal(signal.SIGALRM, signal.SIG_IGN)  # no Python code runs for these
signal.signal(signal.SIGALRM, signal.SIG_DFL)
print(ok, after, seen, handler, inside, gc.isenabled())
"""


def test_no_gc_callback_or_signal_handler_runs_between_a_call_and_its_shipped_outputs() -> None:
    """The garbage collector runs only inside calls: off from the end of each call, through the
    shipping of the outputs and the making of the next inputs (a gc callback of the candidate's
    fires nowhere there: tests/hostile/calls_gc_precompute_next.py), and `gc.enable` outside a
    call does nothing; a Python signal handler (which runs wherever its signal lands) cannot be
    installed once the probes are."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", WINDOW_SCRIPT],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "True False [False] refused [True, True] False"


def test_a_finalizer_cannot_rewrite_a_shipped_trial_before_the_judge_takes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """tests/hostile/calls_finalizer_rewrites_trial_numpy.py, run past the static check: its
    output's finalizer ran when the worker dropped the output right after writing the trial's
    file, and wrote the numpy-computed answer over the written bytes before the judge read
    them; its first trial passed (it failed later only where the collector freed an output
    late). The worker now keeps everything until the judge has taken the files, so its wrong
    kernel fails on the first trial."""
    from benchmarks.harness.judge import JudgeConfig, evaluate
    from benchmarks.harness.static_check import StaticResult
    from benchmarks.verdict import ErrorClass

    monkeypatch.setattr(
        "benchmarks.harness.judge.check_source",
        lambda *a, **k: StaticResult(ok=True, error_class=ErrorClass.NONE, message=""),
    )
    hostile = (
        Path(__file__).resolve().parent / "hostile" / "calls_finalizer_rewrites_trial_numpy.py"
    )
    verdict = evaluate(get_task("softmax_fp32"), hostile, JudgeConfig(device="cpu", trials=2))
    assert verdict.error_class == ErrorClass.NUMERICAL_MISMATCH, verdict.message
    assert "mode standard, trial 0 " in verdict.message, verdict.message
