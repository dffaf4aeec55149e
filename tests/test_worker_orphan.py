"""A spare worker whose judge is gone exits instead of waiting for a request."""

import os
import subprocess
import sys

from benchmarks.harness.child import REPO_ROOT


def test_spare_worker_exits_when_its_judge_is_not_its_parent(tmp_path):
    # a pid that is not our parent: as if the judge had died while the worker was importing
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks.harness.worker",
            "--serve",
            str(tmp_path),
            "cpu",
            str(os.getpid() + 10_000_000),
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "TRITON_INTERPRET": "1"},
    )
    assert proc.wait(timeout=120) == 0
    assert not (tmp_path / "result.json").exists()
