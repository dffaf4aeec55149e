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
from benchmarks.harness.worker import _warm_up
_warm_up("cpu", Path(tempfile.mkdtemp()))
print("dynamo" if "torch._dynamo" in sys.modules else "no dynamo")
"""


def test_the_warm_up_does_not_import_torch_dynamo() -> None:
    """PyTorch wraps a TorchDispatchMode's __torch_dispatch__ so that its first call imports all
    of torch._dynamo (1.2-1.5 CPU-s here, a third of a worker's start); the dispatch recorder
    opts out (benchmarks/harness/fallback.py, AtenRecorder._should_skip_dynamo)."""
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "no dynamo", out.stdout
