"""Model-written tests run in the judge's sandbox: the model's script is as untrusted as its kernel."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from agents.core.model_tests import run_model_test
from benchmarks.harness import sandbox

KERNEL = "def f(x):\n    return x\n"

needs_bwrap = pytest.mark.skipif(
    sandbox.detect().level != sandbox.BWRAP, reason="bubblewrap is not usable here"
)


@needs_bwrap
def test_a_model_test_cannot_read_keys_write_outside_or_reach_the_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-model-test-key")
    outside = tmp_path / "outside.txt"
    home_file = Path.home() / ".kf-model-test-probe"
    listener = socket.create_server(("127.0.0.1", 0))  # the host's loopback, listening
    port = listener.getsockname()[1]
    script = f"""
import os, socket, sys
from kernel import f
leaks = []
if "sk-planted" in repr(dict(os.environ)):
    leaks.append("env")
for target in ({str(outside)!r}, {str(home_file)!r}):
    try:  # read-only, or a private tmpfs over it: the host file must not appear (checked below)
        open(target, "w").write("x")
    except OSError:
        pass
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=1)
    leaks.append("network")
except OSError:
    pass
if os.path.exists("/proc/1/environ"):
    try:
        if "sk-planted" in open("/proc/1/environ").read():
            leaks.append("init environ")
    except OSError:
        pass
print("LEAKS", leaks)
sys.exit(0 if not leaks else 3)
"""
    with listener:
        result = run_model_test(script, KERNEL, device="cpu", timeout_s=60)
    assert result.isolation == sandbox.BWRAP
    assert result.passed, result.output
    assert "LEAKS []" in result.output
    assert not outside.exists() and not home_file.exists()


@needs_bwrap
def test_a_model_test_that_forks_a_daemon_leaves_nothing_running(tmp_path: Path) -> None:
    marker = tmp_path / "late.txt"
    script = f"""
import os, time
if os.fork() == 0:
    os.setsid()
    time.sleep(3)
    open({str(marker)!r}, "w").write("still here")
    os._exit(0)
"""
    result = run_model_test(script, KERNEL, device="cpu", timeout_s=60)
    assert result.returncode == 0, result.output
    import time

    time.sleep(4)
    assert not marker.exists()


def test_without_isolation_a_model_test_is_refused_unless_the_user_opted_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sandbox, "detect", lambda: sandbox.Available(sandbox.NONE, "test: none"))
    monkeypatch.delenv(sandbox.UNSAFE_ENV, raising=False)
    refused = run_model_test("import sys; sys.exit(0)", KERNEL, device="cpu")
    assert refused.isolation == "refused" and not refused.passed
    assert "refused" in refused.output and "no OS isolation" in refused.output
    monkeypatch.setenv(sandbox.UNSAFE_ENV, "1")
    ran = run_model_test("import sys; sys.exit(0)", KERNEL, device="cpu", timeout_s=60)
    assert ran.passed and ran.isolation == sandbox.NONE
