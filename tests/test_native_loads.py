"""Once the probes are installed, native code enters the candidate's process only as Triton builds
it (benchmarks/harness/native.py): tests/hostile/calls_extension_module_native.py wrote a CPython
extension into its temporary folder, loaded it through importlib (no audit event, no ctypes) and
computed the softmax in C past the static check. Checked in a subprocess: the probes cannot be
uninstalled."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
C_SOURCE = r"""
#include <Python.h>
static PyObject *answer(PyObject *self, PyObject *args) { return PyLong_FromLong(42); }
static PyMethodDef methods[] = {{"answer", answer, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kf_probe_ext", NULL, -1, methods};
PyMODINIT_FUNC PyInit_kf_probe_ext(void) { return PyModule_Create(&module); }
"""

SCRIPT = r"""
import glob, importlib.machinery, importlib.util, os, shutil, subprocess, sys, sysconfig, tempfile
from benchmarks.harness import native, probes

mode, source = sys.argv[1], sys.argv[2]
if mode == "gpu" and source:  # the folder lists _build takes (Triton 3.6: 3; later: 4)
    import inspect
    from triton.runtime import build
    lists = [[] for p in list(inspect.signature(build._build).parameters.values())[3:]
             if p.default is inspect.Parameter.empty]
probes.install(compiles=mode == "gpu")


def load(name, path):
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def attempt(label, fn):
    try:
        fn()
        print(label + "=ran")
    except probes.NativeAccessRefused:
        print(label + "=refused")
    except Exception as exc:
        print(label + "=" + type(exc).__name__)


scratch = tempfile.mkdtemp()
dynload = sysconfig.get_config_var("DESTSHARED")
installed = [p for p in sorted(glob.glob(dynload + "/*.so"))
             if os.path.basename(p).split(".")[0] not in sys.modules]
stem = os.path.basename(installed[0]).split(".")[0]
attempt("installed", lambda: load(stem, installed[0]))
copy = os.path.join(scratch, os.path.basename(installed[1]))
shutil.copy(installed[1], copy)
attempt("copied", lambda: load(os.path.basename(installed[1]).split(".")[0], copy))
fd = os.memfd_create("kf")
os.write(fd, open(installed[2], "rb").read())
attempt("memfd", lambda: load(os.path.basename(installed[2]).split(".")[0], f"/proc/self/fd/{fd}"))

if mode == "gpu" and source:
    src_path = os.path.join(scratch, "kf_probe_ext.c")
    with open(src_path, "w") as f:
        f.write(source)
    own = os.path.join(scratch, "own")
    os.makedirs(own)
    attempt("own build", lambda: build._build("kf_probe_ext", src_path, own, *lists))
    attempt("compiler", lambda: subprocess.run(["gcc", "--version"], capture_output=True))
    native._launcher_guard(lambda: source)()  # as Triton's launcher generator returns it
    made = os.path.join(scratch, "made")
    os.makedirs(made)
    so = build._build("kf_probe_ext", src_path, made, *lists)
    print("built=" + str(load("kf_probe_ext", so).answer()))
    import threading
    go = threading.Event()
    helper = threading.Thread(target=go.wait, daemon=True)
    helper.start()  # a thread of its own alive: it could rewrite the source mid-build
    beside = os.path.join(scratch, "beside")
    os.makedirs(beside)
    attempt("beside build", lambda: build._build("kf_probe_ext", src_path, beside, *lists))
    go.set()
    helper.join()
    attempt("after build", lambda: build._build("kf_probe_ext", src_path, beside, *lists))
    print("refused=" + ",".join(sorted(set(native.refused)))[:300])
"""


def _run(mode: str, source: str = "") -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, source],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)


@pytest.mark.parametrize("mode", ["cpu", "gpu"])
def test_an_extension_the_candidate_wrote_is_refused_an_installed_one_loads(mode: str) -> None:
    lines = _run(mode)
    assert lines["installed"] == "ran", lines  # the Python installation's own: read-only
    assert lines["copied"] == "refused", lines  # the same bytes in a folder it writes
    assert lines["memfd"] == "refused", lines  # no file of its own behind the path


def test_only_a_source_triton_generated_is_built_and_loaded() -> None:
    """Where Triton compiles (a GPU): its C build of a source its launcher generator returned
    runs, the compiler starting inside it, and the bytes built load; a source of the
    candidate's own is refused, and so is a C compiler it starts itself, and a build while a
    thread the candidate started is alive (it could rewrite the source mid-build)."""
    include = sysconfig.get_paths()["include"]
    if shutil.which("gcc") is None or not Path(include, "Python.h").is_file():
        pytest.skip("needs gcc and the Python headers (Triton's launcher build needs them too)")
    pytest.importorskip("triton.runtime.build")
    lines = _run("gpu", C_SOURCE)
    assert lines["own build"] == "refused", lines
    assert lines["compiler"] == "refused", lines
    assert lines["built"] == "42", lines
    assert lines["beside build"] == "refused", lines  # a thread it started is alive
    assert lines["after build"] == "ran", lines  # that thread is gone
    assert "a C build of" in lines["refused"], lines


def test_a_folder_is_judged_as_a_folder(tmp_path: Path) -> None:
    """Seen on the H100 (2026-12-07): Triton's own library folder, handed to its launcher build,
    was judged as a path with no file behind it and every honest GPU candidate was refused. A
    folder counts as written when files can be put into it and it lies under a temporary folder
    or outside the Python installation."""
    from benchmarks.harness.native import writable_by_candidate

    installed = Path(sysconfig.get_paths()["purelib"])
    assert not writable_by_candidate(str(installed))  # read-only, or an install root
    assert not writable_by_candidate(str(Path(sys.prefix)))
    assert writable_by_candidate("/tmp")
    assert writable_by_candidate(str(tmp_path)) == str(tmp_path).startswith(("/tmp", "/dev/shm"))
    assert writable_by_candidate(str(tmp_path / "missing.so"))
