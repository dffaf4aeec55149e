"""Task integrity: the judge seals each task it loads (sha256 of its file), checks the seal before
and after every evaluation, and hands the worker a private read-only copy; a task file changed
before or during an evaluation, or a worker copy changed, is a harness_error verdict that says
so, never a verdict against the changed task."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchmarks.harness import integrity
from benchmarks.harness import judge as judge_module
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass
from knowledge_base import solution_path

CONFIG = JudgeConfig(device="cpu", trials=1, modes=("standard",), timeout_s=120)


@pytest.fixture
def task(tmp_path: Path):
    """softmax_fp32 loaded from a copy of its file in tmp_path (the test may change it)."""
    path = tmp_path / "tasks" / "softmax.py"
    path.parent.mkdir()
    shutil.copyfile(get_task("softmax_fp32").path, path)
    return get_task(f"{path}:fp32")


def _zeros_reference(path: Path) -> None:
    """What a hostile rewrite would do: a reference that returns zeros."""
    with open(path, "a") as f:
        f.write("\n\ndef softmax(x):\n    return x * 0\n")


def test_an_untouched_task_passes_with_a_staged_copy(task, monkeypatch):
    seen = {}
    submit = judge_module.Child.submit

    def spy(child, job):
        seen["path"] = Path(job.task_path)
        seen["folder"] = child.folder
        seen["writable"] = os.access(job.task_path, os.W_OK)
        return submit(child, job)

    monkeypatch.setattr(judge_module.Child, "submit", spy)
    verdict = evaluate(task, solution_path("softmax"), CONFIG)
    assert verdict.passed, verdict.message
    assert seen["path"].parent == seen["folder"] / "inputs" and seen["path"] != task.path
    assert not seen["writable"] or os.geteuid() == 0  # root ignores the mode bits


def test_a_task_file_changed_since_it_was_loaded_is_refused(task):
    integrity.seal(task)
    _zeros_reference(task.path)
    verdict = evaluate(task, solution_path("softmax"), CONFIG)
    assert verdict.error_class == ErrorClass.HARNESS_ERROR and not verdict.passed
    assert "the task file" in verdict.message and "changed since the judge first loaded it" in (
        verdict.message
    )


def test_a_task_file_changed_during_the_evaluation_fails_it(task, monkeypatch):
    run = judge_module._run_candidate

    def rewrite_then_run(*args, **kwargs):
        _zeros_reference(task.path)
        return run(*args, **kwargs)

    monkeypatch.setattr(judge_module, "_run_candidate", rewrite_then_run)
    verdict = evaluate(task, solution_path("softmax"), CONFIG)
    assert verdict.error_class == ErrorClass.HARNESS_ERROR and not verdict.passed
    assert "changed during the evaluation" in verdict.message
    assert "task_changed" in verdict.flags


def test_a_changed_worker_copy_fails_the_evaluation(task, monkeypatch):
    run = judge_module._run_candidate

    def rewrite_copy_then_run(verdict, task_, child, job, *args, **kwargs):
        copy = Path(job.task_path)
        copy.chmod(0o644)
        _zeros_reference(copy)
        return run(verdict, task_, child, job, *args, **kwargs)

    monkeypatch.setattr(judge_module, "_run_candidate", rewrite_copy_then_run)
    verdict = evaluate(task, solution_path("softmax"), CONFIG)
    assert verdict.error_class == ErrorClass.HARNESS_ERROR and not verdict.passed
    assert "worker's copy" in verdict.message


def test_the_seal_covers_files_the_task_imports_from_its_folder(tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "helper_for_seal.py").write_text("SCALE = 1.0\n")
    task = get_task("softmax_fp32")
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("helper_for_seal", folder / "helper_for_seal.py")
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    sys.modules["helper_for_seal"] = helper
    try:
        fake_module = type(sys)("fake_task")
        fake_module.helper_for_seal = helper
        shutil.copyfile(task.path, folder / "softmax.py")
        import dataclasses

        fake = dataclasses.replace(task, path=folder / "softmax.py", module=fake_module)
        assert folder / "helper_for_seal.py" in integrity.task_files(fake)
        integrity.seal(fake)
        (folder / "helper_for_seal.py").write_text("SCALE = 0.0\n")
        assert "helper_for_seal.py changed" in (integrity.verify(fake, "now") or "")
    finally:
        sys.modules.pop("helper_for_seal", None)
