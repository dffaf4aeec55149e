"""Parsing on many threads at once (issue 16, item 7).

CPython 3.11 builds `ast` trees with an interpreter-wide recursion counter: a garbage collection
that runs a finaliser in the middle of one thread's `ast.parse` lets another thread parse, and one
of them ends in `SystemError: AST constructor recursion depth mismatch` (the offline run of
cross_entropy_fp16 died of it in 3 of 5 runs: its two generator slots are threads). Every parse
in the project goes through `benchmarks.pyparse`, which serialises them. These tests put the same
pressure (cycles with finalisers collected while parsing) on the real parsing paths, the static
check and the offline generator's, from several threads."""

from __future__ import annotations

import ast
import gc
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from agents.offline import policy
from benchmarks.harness.static_check import check_source
from knowledge_base.corpus import read_kb_meta

REPO = Path(__file__).resolve().parents[1]
KERNELS = sorted((REPO / "knowledge_base" / "kernels").glob("[!_]*.py"))
BIG = "\n".join(p.read_text() for p in KERNELS[:5])  # ~15 KB: many nodes per parse
THREADS = 4
ROUNDS = 60


class _Finalised:
    """Garbage with a Python finaliser: collecting it runs bytecode, which lets threads switch."""

    def __del__(self) -> None:
        total = 0
        for i in range(50):
            total += i


def _litter() -> None:
    """Cycles with finalisers, left for the collector: the next collection (during the parse that
    follows) runs their finalisers."""
    for _ in range(20):
        a, b = _Finalised(), _Finalised()
        a.other, b.other = b, a


def _hammer(work: Callable[[], object], rounds: int = ROUNDS) -> list[str]:
    """Run `work` `rounds` times on each of THREADS threads at once, littering between calls; the
    SystemErrors raised."""
    errors: list[str] = []
    start = threading.Barrier(THREADS)

    def run() -> None:
        start.wait()
        for _ in range(rounds):
            _litter()
            try:
                work()
            except SystemError as exc:
                errors.append(str(exc))

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    old = gc.get_threshold()
    gc.set_threshold(100)  # collect often, as a busy agent process does
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        gc.set_threshold(*old)
    return errors


def test_the_pressure_reproduces_the_interpreter_bug_on_a_bare_parse() -> None:
    """The harness is real: on an interpreter with the bug, plain `ast.parse` fails under it."""
    errors = _hammer(lambda: ast.parse(BIG))
    if not errors:
        pytest.skip(f"Python {sys.version.split()[0]} does not show the bug (fixed in 3.12)")
    assert "recursion depth mismatch" in errors[0]


def test_static_check_on_many_threads_never_fails_to_parse() -> None:
    source = (REPO / "tests" / "hostile" / "good_softmax.py").read_text()
    big = source + "\n" + "\n".join(f"_pad_{i} = [{i}, ({i}, {{'k': {i}}})]" for i in range(200))

    def work() -> None:
        result = check_source(big, entry_point="softmax", params=["x"])
        assert result.ok, result.message

    assert _hammer(work, rounds=12) == []


def test_offline_generator_paths_on_many_threads_never_fail_to_parse() -> None:
    sources = [p.read_text() for p in KERNELS[:3]]

    def work() -> None:
        for text in sources:  # the garbage left before each parse is collected during it
            policy.kb_meta(text)
            _litter()
            policy.adapt(text, "kf_entry", ["x"])
            _litter()
            policy.tunable_values(text, "kf_entry")
            _litter()
        read_kb_meta(KERNELS[0])

    assert _hammer(work, rounds=25) == []


STRESS = """
import gc, sys, threading
sys.path.insert(0, {repo!r})
from benchmarks.pyparse import parse

src = open({kernel!r}).read() * 3
class F:
    def __del__(self):
        sum(range(50))
errors = []
def run():
    for _ in range(60):
        for _ in range(20):
            a, b = F(), F(); a.o, b.o = b, a
        try:
            parse(src)
        except SystemError as exc:
            errors.append(str(exc))
gc.set_threshold(100)
threads = [threading.Thread(target=run) for _ in range(4)]
[t.start() for t in threads]; [t.join() for t in threads]
print(len(errors))
"""


@pytest.mark.parametrize("version", ["3.12"])
def test_the_parse_helper_on_many_threads_under_another_python(version: str) -> None:
    """`benchmarks.pyparse` imports nothing of ours: it runs, and holds, under Python `version`
    where one is installed (pyenv or PATH)."""
    pyenv = sorted(Path.home().glob(f".pyenv/versions/{version}*/bin/python{version}"))
    found = str(pyenv[-1]) if pyenv else shutil.which(f"python{version}")
    if found is None:
        pytest.skip(f"no python{version} here")
    code = STRESS.format(repo=str(REPO), kernel=str(KERNELS[0]))
    proc = subprocess.run(
        [found, "-I", "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "0"
