"""Session-wide test set-up.

Triton decides between compiling for a GPU and its CPU interpreter when a kernel is decorated,
from TRITON_INTERPRET. On a machine without CUDA every in-process kernel must be interpreted, so
the variable is set here, before any test module imports triton; which test ran first then cannot
change how a later one's kernels behave. On a GPU machine it is left alone (the judge sets it for
its own child processes either way).
"""

import os
import sys
from pathlib import Path

if "TRITON_INTERPRET" not in os.environ:
    import torch

    if not torch.cuda.is_available():
        os.environ["TRITON_INTERPRET"] = "1"

# tests import their helpers (hostile_manifest, llm_servers, ...) by module name
sys.path.insert(0, str(Path(__file__).resolve().parent))

# Where no OS isolation is available (no bubblewrap), the suite's own candidates run unisolated
# with the judge's one-line warning: the README's `make test` keeps working on such a machine, and
# the tests that need isolation skip, saying why (tests/test_sandbox_hostile.py).
from benchmarks.harness import sandbox  # noqa: E402

if sandbox.level() == sandbox.NONE:
    os.environ.setdefault(sandbox.UNSAFE_ENV, "1")
