"""A Triton launch after the candidate's call returned and before the worker shipped its outputs
fails the trial (`trace_evaded`): code a candidate leaves behind (a gc callback, a finalizer, a
hook fired by the worker's own events) could rewrite an output there with a Python-computed
answer and a Triton copy, and nothing else would see it. Checked in-process on the CPU
interpreter, the late launch made by the trial writer's stand-in."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import triton
import triton.language as tl

from benchmarks.harness import transport, worker
from benchmarks.harness.fallback import TritonLaunchCounter
from benchmarks.harness.messages import CandidateResult, Trial
from benchmarks.loading import get_task


@triton.jit
def _scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def _candidate(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    _scale[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
    return y


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
            _candidate(torch.ones(8))
        return written(*args, **kwargs)

    monkeypatch.setattr(transport, "write_trial", write_after_a_late_launch)
    try:
        result = CandidateResult()
        runner = worker._TrialRunner(task, "cpu", counter, tmp_path, worker._quiet, result)
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
from tests.test_late_launch import _candidate

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
runner = worker._TrialRunner(
    get_task("softmax_fp32"), "cpu", counter, Path(tempfile.mkdtemp()), worker._quiet, result
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
from tests.test_late_launch import _candidate

probes.install()
counter = TritonLaunchCounter()
counter.install()
written = transport.write_trial
seen = []

def write_noting_the_collector(*args, **kwargs):  # where a gc callback would have fired
    seen.append(gc.isenabled())
    return written(*args, **kwargs)

transport.write_trial = write_noting_the_collector
runner = worker._TrialRunner(
    get_task("softmax_fp32"), "cpu", counter, Path(tempfile.mkdtemp()), worker._quiet,
    CandidateResult(),
)
item = Trial(n=0, shape="s", dims={"M": 3, "N": 20}, mode="standard", trial=0, seed=1, first=True)
ok = runner.run(item, _candidate)
try:
    signal.signal(signal.SIGALRM, lambda *a: None)
    handler = "installed"
except probes.HookRefused:
    handler = "refused"
signal.signal(signal.SIGALRM, signal.SIG_IGN)  # no Python code runs for these
signal.signal(signal.SIGALRM, signal.SIG_DFL)
print(ok, gc.isenabled(), seen, handler)
"""


def test_no_gc_callback_or_signal_handler_runs_between_a_call_and_its_shipped_outputs() -> None:
    """From the end of each call until the outputs are shipped the garbage collector is off (a
    gc callback of the candidate's fires nowhere there) and on again after; a Python signal
    handler (which runs wherever its signal lands) cannot be installed once the probes are."""
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
    assert done.stdout.strip().splitlines()[-1] == "True True [False] refused"
