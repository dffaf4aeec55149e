"""Every task passes `kernforge tasks check` on the CPU: the reference runs, inputs are seeded,
formulas are sane, outlier mode bites, the reference solution passes and a perturbed copy fails.

Runs the self-check in child processes (it needs TRITON_INTERPRET=1 before triton is imported),
one per category, so a failure names the category and the task."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.loading import load_all
from benchmarks.selfcheck import perturb_source
from benchmarks.task import CATEGORIES

ROOT = Path(__file__).resolve().parent.parent
TASKS = load_all()
PRESENT = sorted({t.category for t in TASKS.values()})


@pytest.mark.parametrize("category", PRESENT)
def test_every_task_in_category_passes_self_check(category):
    ids = ",".join(t.id for t in TASKS.values() if t.category == category)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.selfcheck", "--device", "cpu", "--tasks", ids, "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=900,
    )
    assert proc.stdout, proc.stderr[-2000:]
    results = json.loads(proc.stdout)
    failed = {
        r["task_id"]: {k: v for k, v in r["checks"].items() if v.startswith("FAIL")}
        for r in results
        if not r["ok"]
    }
    assert not failed, failed
    assert proc.returncode == 0


def test_perturbation_shifts_every_store():
    src = "def k(p, v):\n    tl.store(p, v, mask=m)\n    tl.store(p + 1, v * 2)\n"
    out = perturb_source(src)
    assert "tl.store(p, v + 1, mask=m)" in out and "tl.store(p + 1, v * 2 + 1)" in out


def test_categories_are_known():
    assert set(PRESENT) <= set(CATEGORIES)


def test_a_missing_solutions_folder_is_a_one_line_usage_error(tmp_path, capsys):
    from benchmarks.selfcheck import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--solutions", str(tmp_path / "nowhere"), "--tasks", "silu_fp32"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"--solutions {tmp_path / 'nowhere'}: no folder" in err


def test_the_solutions_come_from_the_folder_given(tmp_path):
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.selfcheck", "--tasks", "silu_fp32", "--json"]
        + ["--solutions", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    checks = json.loads(proc.stdout)[0]["checks"]
    assert checks["solution"] == f"FAIL: no reference solution at {tmp_path / 'silu.py'}"
