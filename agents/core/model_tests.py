"""Model-written tests (agent.llm_tests), as KernelAgent verifies its kernels.

The model writes one test script for the task (agents/core/nodes/write_tests.py). Every candidate is
then run against it: the candidate is saved as `kernel.py` beside `test_kernel.py` in a fresh
temporary folder, and `python test_kernel.py` runs in its own process group with a timeout that
kills the whole group. Exit status 0 is a pass.

Both files are model-written, so the script runs in the judge's sandbox for untrusted code
(`benchmarks.harness.sandbox`: no network, its own pid namespace, a read-only view of the system
and the project, a writable folder of its own, a scrubbed environment, rlimits). Where no
isolation exists it is refused, unless the user opted in to the unsafe mode
(KERNFORGE_UNSAFE_NO_ISOLATION=1); the result says which.

The outcome is feedback for the repair prompt and a record in the attempt; it is never the
verdict. The judge (benchmarks.harness.judge) alone decides whether a kernel is correct, so a kernel that
passes the model's test but not the judge is a failure, and the other way round.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks import candidate_launch, isolation_refusal

TEST_FILE = "test_kernel.py"
KERNEL_FILE = "kernel.py"
TIMEOUT_S = 120.0
OUTPUT_TAIL = 4000


@dataclass
class ModelTestResult:
    passed: bool
    returncode: int | None  # None: killed at the timeout
    output: str  # the last OUTPUT_TAIL characters of stdout and stderr together
    seconds: float
    timed_out: bool = False
    isolation: str = "none"  # "bwrap", "none" (unsafe mode) or "refused"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_model_test(
    test_code: str, kernel_code: str, *, device: str, timeout_s: float = TIMEOUT_S
) -> ModelTestResult:
    """Run the model's test script against one candidate, sandboxed, in a child process group."""
    refused = isolation_refusal(trusted=False, allow_unisolated=False)
    if refused:
        return ModelTestResult(False, None, refused, 0.0, isolation="refused")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kf-model-test-") as folder:
        (Path(folder) / KERNEL_FILE).write_text(kernel_code, encoding="utf-8")
        (Path(folder) / TEST_FILE).write_text(test_code, encoding="utf-8")
        launch = candidate_launch(Path(folder), device, [sys.executable, TEST_FILE])
        proc = subprocess.Popen(
            launch.argv,
            cwd=folder,
            env=launch.env,
            preexec_fn=launch.preexec_fn,  # noqa: PLW1509 - only setrlimit calls
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            out, _ = proc.communicate(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            timed_out = True
    text = out.decode("utf-8", errors="replace")
    if timed_out:
        text += f"\n[killed: the test ran past {timeout_s:.0f} s]"
    return ModelTestResult(
        passed=not timed_out and proc.returncode == 0,
        returncode=None if timed_out else proc.returncode,
        output=text[-OUTPUT_TAIL:],
        seconds=round(time.monotonic() - started, 3),
        timed_out=timed_out,
        isolation=launch.isolation,
    )
