"""Once the probes are installed, the candidate's process starts no process but Triton's compiler
tools: a helper process computes where no probe runs (tests/hostile/calls_forked_helper_numpy.py
computed softmax in a forked helper over shared memory and passed past the static check). Checked
in a subprocess: the probes cannot be uninstalled."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import ctypes, os, subprocess, sys
from benchmarks.harness import probes

probes.install(compiles=sys.argv[1] == "gpu")
tries = {
    "fork": lambda: os.fork(),
    "system": lambda: os.system("true"),
    "posix_spawn": lambda: os.posix_spawn("/bin/true", ["true"], os.environ),
    "subprocess": lambda: subprocess.run([sys.executable, "-c", "pass"]),
    "fork_exec": lambda: __import__("_posixsubprocess").fork_exec(
        [b"true"], [b"/bin/true"], *([None] * 20)
    ),
    "libc fork": lambda: ctypes.CDLL(None).fork,
    "libc syscall": lambda: ctypes.CDLL(None).syscall,
}
for name, start in tries.items():
    try:
        start()
        print(name + "=started")
    except probes.ProcessRefused:
        print(name + "=refused")
    except Exception as exc:
        print(name + "=" + type(exc).__name__)
ld = "/sbin/ldconfig" if os.path.exists("/sbin/ldconfig") else None
if ld:
    try:
        print("ldconfig=" + str(subprocess.run([ld, "-p"], capture_output=True).returncode == 0))
    except probes.ProcessRefused:
        print("ldconfig=refused")
print("getpid=" + str(ctypes.CDLL(None).getpid() == os.getpid()))
import shutil, tempfile
mine = os.path.join(tempfile.mkdtemp(), "libmine.so")
libc = [p for p in ("/lib/x86_64-linux-gnu/libc.so.6", "/lib64/libc.so.6", "/usr/lib/libc.so.6")
        if os.path.exists(p)][0]
shutil.copy(os.path.realpath(libc), mine)
try:
    ctypes.CDLL(mine)
    print("own library=loaded")
except probes.ProcessRefused:
    print("own library=refused")
"""


@pytest.mark.parametrize("device", ["gpu", "cpu"])
def test_starting_a_process_is_refused_but_triton_s_tools_run_where_it_compiles(
    device: str,
) -> None:
    """On a GPU Triton runs ptxas, a C compiler and ldconfig; under the CPU interpreter nothing
    is compiled, so not even those start."""
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, device],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert lines["fork"] == "refused"
    assert lines["system"] == "refused"
    assert lines["posix_spawn"] == "refused"
    assert lines["subprocess"] == "refused"
    assert lines["fork_exec"] == "refused"
    assert lines["libc fork"] == "refused", done.stdout
    assert lines["libc syscall"] == "refused", done.stdout
    if "ldconfig" in lines:  # one of Triton's tools
        assert lines["ldconfig"] == ("True" if device == "gpu" else "refused"), done.stdout
    assert lines["getpid"] == "True"
    assert lines["own library"] == "refused", done.stdout
