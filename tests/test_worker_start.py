"""What a fresh worker pays before its first request: its warm-up must not pull in compilers no
honest candidate uses (each worker start is paid once per evaluation)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PROBE = """
import sys, tempfile
from pathlib import Path
import torch
from benchmarks.harness.fallback import TritonLaunchCounter, record_call
from benchmarks.harness.warmup_kernel import copy_scaled
from benchmarks.harness.worker import _deterministic, _warm_up
_warm_up("cpu", Path(tempfile.mkdtemp()))
# what a traced trial does around the candidate's call: poisoned fresh memory, the recorder
det = torch.utils.deterministic
_deterministic(True, warn_only=True)
det.fill_uninitialized_memory = True
poisoned = bool(torch.isnan(torch.empty(64)).all())
counter = TritonLaunchCounter()
counter.install()
out, info = record_call(counter, copy_scaled, (torch.randn(100),), lambda: None)
_deterministic(False)
print("poisoned" if poisoned else "not poisoned", dict(info.launches))
print("dynamo" if "torch._dynamo" in sys.modules else "no dynamo")
"""


def test_the_warm_up_and_a_traced_call_do_not_import_torch_dynamo() -> None:
    """PyTorch wraps a TorchDispatchMode's __torch_dispatch__ so that its first call imports all
    of torch._dynamo (1.2-1.5 CPU-s here, a third of a worker's start), and
    torch.use_deterministic_algorithms imports it through Inductor's config: the dispatch recorder
    opts out (AtenRecorder._should_skip_dynamo) and the worker sets the dispatcher's flag alone
    (worker._deterministic), which still poisons fresh allocations."""
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert lines[-2].startswith("poisoned") and "_copy_scaled_kernel" in lines[-2], out.stdout
    assert lines[-1] == "no dynamo", out.stdout
