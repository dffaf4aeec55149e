"""The profile node's Nsight Compute run is as sandboxed as the judge's worker.

`run_ncu_on` runs `ncu ... python ncu_driver.py --candidate <code.py>`, and the driver imports the
incumbent: model-written code. That code must meet the judge's wall (benchmarks/harness/sandbox.py):
no API keys in its environment, nothing written outside its scratch folder, hidden homes; and where
no isolation exists, an untrusted candidate is not run at all.

No GPU and no real ncu here: a fake `ncu` (written by the test, found through KERNFORGE_NCU) skips
ncu's options, runs the program (the real driver, inside the real sandbox command) and prints one
kernel's CSV row. On this CPU machine the driver fails at `torch.Generator(device="cuda")`, after
it has imported the candidate, which is when a hostile module's top level runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from benchmarks.harness import sandbox

SECRET = "sk-planted-profile-0123456789abcdef"
NETRC = "machine example.com login kf password KF-PLANTED-PROFILE-NETRC"

needs_bwrap = pytest.mark.skipif(
    sandbox.detect().level != sandbox.BWRAP,
    reason=f"bubblewrap is not usable here: {sandbox.detect().reason}",
)

_CSV = "\n".join(
    [
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
        '"Block Size","Grid Size","Device","CC","gpu__time_duration.sum",'
        '"sm__throughput.avg.pct_of_peak_sustained_elapsed",'
        '"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",'
        '"dram__throughput.avg.pct_of_peak_sustained_elapsed"',
        '"","","","","","","","","","","","nsecond","%","%","%"',
        '"0","7","python","localhost","softmax_kernel","1","7","(128, 1, 1)","(4096, 1, 1)",'
        '"0","9.0","12,288","21.50","88.10","87.90"',
    ]
)


def _fake_ncu(folder: Path, *, exit_with_program: bool) -> Path:
    """An `ncu` that runs the program after `--print-units base` (the last of ncu's options in
    `build_ncu_command`), then prints one kernel's row; it exits with the program's status, or 0."""
    folder.mkdir(parents=True, exist_ok=True)
    fake = folder / "ncu"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import subprocess, sys\n"
        "args = sys.argv[1:]\n"
        'program = args[args.index("--print-units") + 2:]\n'
        "print('==PROF== Connected to process', flush=True)\n"
        "status = subprocess.call(program)\n"
        f"print({_CSV!r})\n"
        f"sys.exit(status if {exit_with_program!r} else 0)\n"
    )
    fake.chmod(0o755)
    return fake


def _hostile(leak: Path, home: Path) -> str:
    """A candidate whose top level reads the planted keys and the planted home's .netrc, and writes
    what it found into host folders (the test's, the planted home); it reports on stderr."""
    return f"""
import os, sys

keys = ("KERNFORGE_TEST_SECRET_KEY", "OPENAI_API_KEY")
found = {{name: os.environ.get(name, "") for name in keys}}
try:
    found["netrc"] = open({str(home / ".netrc")!r}).read()
except OSError as exc:
    found["netrc"] = type(exc).__name__
wrote = []
for target in ({str(leak)!r}, {str(home / "kf_profile_marker.txt")!r}):
    try:
        with open(target, "w") as out:
            out.write(repr(found))
        wrote.append(target)
    except OSError:
        pass
seen = sorted(name for name, value in found.items() if "PLANTED" in value.upper())
print(f"HOSTILE-RAN saw={{seen}} wrote={{wrote}}", file=sys.stderr, flush=True)


def softmax(x):
    return x
"""


def _attempt() -> Any:
    from agents.core.state import Attempt, VerdictSummary

    return Attempt(
        id=1,
        node="generator",
        mode="fresh",
        iteration=1,
        key="k",
        code_path="attempts/1/code.py",
        code_sha256="0" * 64,
        verdict=VerdictSummary(passed=True, perf_status="measured"),
    )


def _ctx(run_dir: Path, code: str, *, trusted: bool = False) -> tuple[Any, dict[str, Any]]:
    """A run context for the profile node: the softmax task, the incumbent's code in `run_dir`
    (inside the test's tmp_path, a folder the sandbox hides: the node must stage it)."""
    from benchmarks import get_task

    code_file = run_dir / "attempts" / "1" / "code.py"
    code_file.parent.mkdir(parents=True)
    code_file.write_text(code)
    written: dict[str, Any] = {}
    run = SimpleNamespace(
        path=run_dir,
        read_code=lambda attempt: (run_dir / attempt.code_path).read_text(),
        read_verdict=lambda i: {"shapes": []},
        write_profile=lambda i, r: written.update(r) or "attempts/1/profile.json",
        update_attempt_record=lambda a: None,
    )
    ctx = SimpleNamespace(
        device="cuda",
        task=get_task("softmax_fp32"),
        config=SimpleNamespace(ncu=True, ncu_timeout_s=240.0, seed=0),
        policy=SimpleNamespace(uses_counters=True, trusted_code=trusted),
        run=run,
        tracker=SimpleNamespace(add_gpu_s=lambda s: None, count_fault=lambda kind: 1),
        event=lambda kind, **fields: None,
        progress=SimpleNamespace(note=lambda *a, **k: None),
    )
    return ctx, written


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keys in the agent's environment and a home folder of its own holding a .netrc."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".netrc").write_text(NETRC)
    monkeypatch.setenv("KERNFORGE_TEST_SECRET_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv(sandbox.UNSAFE_ENV, raising=False)
    return home


def _use_fake_ncu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: bool) -> Path:
    """Point KERNFORGE_NCU at a fake in tmp_path. tmp_path lies in /tmp, which the sandbox hides;
    the folders on PYTHONPATH are bound back read-only (`sandbox.reexposed_dirs`), so the fake is
    put on it: visible inside the sandbox, as a real ncu under /usr/local/cuda is."""
    fake = _fake_ncu(tmp_path / "ncu_bin", **kwargs)
    monkeypatch.setenv("KERNFORGE_NCU", str(fake))
    monkeypatch.setenv("PYTHONPATH", str(fake.parent))
    return fake


@needs_bwrap
def test_a_hostile_incumbent_profiled_by_ncu_sees_no_keys_and_writes_nothing_outside(
    tmp_path: Path, planted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.core.nodes import profile as profile_node

    _use_fake_ncu(tmp_path, monkeypatch, exit_with_program=True)
    leak = tmp_path / "leaked_secret.txt"
    ctx, written = _ctx(tmp_path / "run", _hostile(leak, planted))

    profile_node.profile({"incumbent_id": 1, "attempts": [_attempt()]}, ctx)

    assert not leak.exists()  # the keys and the .netrc reached no host file
    assert list(planted.iterdir()) == [planted / ".netrc"]
    error = written.get("ncu_error", "")
    # it ran and saw no key; what it wrote landed in the sandbox's own /tmp, gone with it
    assert "HOSTILE-RAN saw=[]" in error, error
    assert SECRET not in error and "PLANTED-PROFILE-NETRC" not in error
    # the driver dies on CUDA (none here) after importing the candidate: a clean profile failure
    assert written["feedback"] == "timing only"
    assert "ncu failed" in written["diagnosis"]
    assert written["ncu_isolation"] == sandbox.BWRAP


@needs_bwrap
def test_the_profile_record_says_ncu_ran_sandboxed(
    tmp_path: Path, planted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.core.nodes import profile as profile_node

    _use_fake_ncu(tmp_path, monkeypatch, exit_with_program=False)
    ctx, written = _ctx(tmp_path / "run", "def softmax(x):\n    return x\n")

    profile_node.profile({"incumbent_id": 1, "attempts": [_attempt()]}, ctx)

    assert written["feedback"] == "ncu", written
    assert written["ncu_isolation"] == sandbox.BWRAP
    assert written["ncu_raw"]["isolation"] == sandbox.BWRAP
    assert written["ncu_raw"]["summary"]["kernel_name"] == "softmax_kernel"
    assert written["diagnosis"].startswith("memory-bound")


def test_without_isolation_an_untrusted_incumbent_is_not_profiled(
    tmp_path: Path, planted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.core.nodes import profile as profile_node

    _use_fake_ncu(tmp_path, monkeypatch, exit_with_program=True)
    no_isolation = sandbox.Available(sandbox.NONE, "test: bubblewrap taken away")
    monkeypatch.setattr(sandbox, "detect", lambda: no_isolation)
    leak = tmp_path / "leaked_secret.txt"
    ctx, written = _ctx(tmp_path / "run", _hostile(leak, planted), trusted=False)

    profile_node.profile({"incumbent_id": 1, "attempts": [_attempt()]}, ctx)

    assert not leak.exists()  # the hostile code never ran
    assert list(planted.iterdir()) == [planted / ".netrc"]
    assert written["feedback"] == "timing only"
    assert written["ncu_isolation"] == "refused"
    assert "refused to run this candidate" in written["ncu_skipped"]
    assert "test: bubblewrap taken away" in written["ncu_skipped"]
    assert "Nsight Compute skipped" in written["diagnosis"]


@pytest.mark.gpu
@needs_bwrap
def test_real_ncu_profiles_an_incumbent_inside_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the GPU machine: the real ncu, inside bubblewrap, still reads the counters (the
    sandbox drops every capability; the GPU's device nodes are bound in)."""
    import torch

    from agents.core.nodes import profile as profile_node
    from profiling import ncu_available

    if not torch.cuda.is_available() or not ncu_available():
        pytest.skip("needs a CUDA GPU and ncu")
    monkeypatch.delenv(sandbox.UNSAFE_ENV, raising=False)
    good = Path(__file__).resolve().parent / "hostile" / "good_softmax.py"
    ctx, written = _ctx(tmp_path / "run", good.read_text())
    ctx.config.ncu_timeout_s = 300.0

    profile_node.profile({"incumbent_id": 1, "attempts": [_attempt()]}, ctx)

    assert written["feedback"] == "ncu", written.get("ncu_error")
    assert written["ncu_isolation"] == sandbox.BWRAP
    assert "_row_softmax" in (written["ncu_raw"]["summary"]["kernel_name"] or "")
