"""The sandbox's pieces (benchmarks/harness/sandbox.py) without starting a worker: the scrubbed
environment, the bubblewrap command line, the rlimits, and who may run where no isolation exists."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks.harness import sandbox
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass, Verdict

TESTS = Path(__file__).resolve().parent
KEY = "sk-test-kf-planted-0123456789abcdef"


def test_worker_environment_is_an_allow_list(tmp_path: Path) -> None:
    base = {
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "OPENAI_API_KEY": KEY,
        "ANTHROPIC_API_KEY": KEY,
        "HF_TOKEN": KEY,
        "GITHUB_TOKEN": KEY,
        "AWS_SECRET_ACCESS_KEY": KEY,
        "HOME": "/home/someone",
        "SSH_AUTH_SOCK": "/run/user/0/agent",
        "CUDA_VISIBLE_DEVICES": "1",
        "PYTHONPATH": "/extra",
        "TRITON_CACHE_DIR": "/shared/cache",
    }
    env = sandbox.worker_env(tmp_path, "cpu", base)
    assert KEY not in json.dumps(env)
    assert "SSH_AUTH_SOCK" not in env
    assert env["HOME"] == str(tmp_path) and env["TMPDIR"].startswith(str(tmp_path))
    assert env["TRITON_CACHE_DIR"].startswith(str(tmp_path))  # never a shared, poisonable cache
    assert env["TRITON_INTERPRET"] == "1" and env["CUDA_VISIBLE_DEVICES"] == "1"
    assert env["LANG"] == "C.UTF-8" and env["LC_ALL"] == "C"
    assert env["PYTHONPATH"].split(":") == [str(sandbox.REPO_ROOT), "/extra"]
    assert "TRITON_INTERPRET" not in sandbox.worker_env(tmp_path, "cuda", base)


def test_bwrap_command_isolates_and_binds_only_the_scratch_folder(tmp_path: Path) -> None:
    argv = sandbox.bwrap_prefix(tmp_path, "cpu")
    for flag in ("--unshare-all", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert "--share-net" not in argv
    writable = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    assert writable == [str(tmp_path.resolve())]
    scratch = str(tmp_path.resolve() / "tmp")
    masked = [argv[i + 1] for i, a in enumerate(argv) if a == "--tmpfs"]
    assert "/root" in masked and "/tmp" in masked and "/home" in masked
    # the scratch folder is bound after the masks (it may sit under /tmp), the inputs read-only
    # over it, and its tmp/ a tmpfs of its own over that
    masks = [i for i, a in enumerate(argv) if a == "--tmpfs" and argv[i + 1] != scratch]
    assert argv.index("--bind") > max(masks)
    assert argv.index(scratch) > argv.index("--bind")
    # every writable tmpfs is sized; the hiding ones and /dev are read-only
    size = str(sandbox.limits_for("cpu").tmpfs_size)
    sized = [argv[i + 3] for i, a in enumerate(argv) if a == "--size"]
    assert all(argv[i + 1] == size for i, a in enumerate(argv) if a == "--size")
    assert sorted(sized) == sorted(sandbox.scratch_mounts(tmp_path))
    read_only = [argv[i + 1] for i, a in enumerate(argv) if a == "--remount-ro"]
    assert {"/dev", "/root", "/home", "/run"} <= set(read_only) and "/tmp" not in read_only
    assert argv[-1] == "--" and "--dev-bind" not in argv


@pytest.mark.skipif(sandbox.level() != sandbox.BWRAP, reason="needs bubblewrap")
def test_only_the_folder_and_small_tmpfs_are_writable_in_the_sandbox(tmp_path: Path) -> None:
    (tmp_path / "inputs").mkdir()
    mib = sandbox.limits_for("cpu").tmpfs_size >> 20
    script = (
        "for d in /run /root /home /dev /var/tmp; do touch $d/kf_x 2>/dev/null && echo wrote:$d; done; "
        f"for d in /tmp /dev/shm {tmp_path}/tmp; do "
        f"dd if=/dev/zero of=$d/fill bs=1M count={mib + 8} 2>/dev/null; "
        "echo size:$d:$(du -m $d/fill | cut -f1); done; touch ok && echo folder"
    )
    argv = [*sandbox.bwrap_prefix(tmp_path, "cpu"), "sh", "-c", script]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout.split()
    assert not [line for line in out if line.startswith("wrote:")], out
    sizes = [int(line.rsplit(":", 1)[1]) for line in out if line.startswith("size:")]
    assert len(sizes) == 3 and all(n <= mib for n in sizes), out
    assert "folder" in out and (tmp_path / "ok").exists()
    assert list((tmp_path / "tmp").iterdir()) == []  # what it wrote there stayed in the sandbox


def test_cuda_binds_the_gpu_device_nodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "gpu_nodes", lambda: ["/dev/nvidia0", "/dev/nvidiactl"])
    argv = sandbox.bwrap_prefix(tmp_path, "cuda")
    bound = [argv[i + 1] for i, a in enumerate(argv) if a == "--dev-bind"]
    assert bound == ["/dev/nvidia0", "/dev/nvidiactl"]


def test_needed_paths_hidden_by_a_mask_are_bound_back(monkeypatch: pytest.MonkeyPatch) -> None:
    repo = sandbox.REPO_ROOT
    monkeypatch.setattr(sandbox, "masked_dirs", lambda: [repo.parent])
    assert repo in sandbox.reexposed_dirs()
    assert sandbox.visible(repo / "benchmarks" / "task.py", Path("/nonexistent"))
    assert not sandbox.visible(repo.parent / "kf-not-needed" / "x", Path("/nonexistent"))


def test_limits_leave_cuda_address_space_unlimited() -> None:
    cpu, cuda = sandbox.limits_for("cpu"), sandbox.limits_for("cuda")
    assert cpu.address_space is not None and cuda.address_space is None
    for lim in (cpu, cuda):
        assert lim.processes > 0 and lim.cpu_s > 0 and lim.file_size > 0 and lim.open_files > 0


def test_apply_limits_sets_them_in_a_child() -> None:
    import subprocess
    import sys

    code = (
        "import resource, functools;"
        "from benchmarks.harness import sandbox;"
        "sandbox.apply_limits(sandbox.limits_for('cpu'));"
        "print(resource.getrlimit(resource.RLIMIT_AS)[0], resource.getrlimit(resource.RLIMIT_NOFILE)[0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=sandbox.REPO_ROOT,
        env={"PYTHONPATH": str(sandbox.REPO_ROOT), "PATH": "/usr/bin:/bin"},
    )
    as_limit, nofile = (int(v) for v in out.stdout.split())
    assert as_limit == sandbox.limits_for("cpu").address_space
    assert nofile <= sandbox.limits_for("cpu").open_files


@pytest.fixture
def no_isolation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "detect", lambda: sandbox.Available(sandbox.NONE, "test: none"))
    monkeypatch.delenv(sandbox.UNSAFE_ENV, raising=False)


def test_without_isolation_only_project_kernels_or_the_unsafe_flag_run(
    no_isolation: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = sandbox.refusal(trusted=False, allow_unisolated=False)
    assert refused and "--unsafe-no-isolation" in refused and "bubblewrap" in refused
    assert sandbox.refusal(trusted=True, allow_unisolated=False) is None
    assert sandbox.refusal(trusted=False, allow_unisolated=True) is None
    monkeypatch.setenv(sandbox.UNSAFE_ENV, "1")
    assert sandbox.refusal(trusted=False, allow_unisolated=False) is None


def test_an_untrusted_candidate_is_refused_with_a_verdict(
    no_isolation: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_child(*args: object, **kwargs: object) -> None:
        raise AssertionError("a refused candidate must not be executed")

    monkeypatch.setattr("benchmarks.harness.judge.acquire", no_child)
    verdict = evaluate(
        get_task("softmax_fp32"), TESTS / "hostile" / "good_softmax.py", JudgeConfig(device="cpu")
    )
    assert verdict.error_class == ErrorClass.HARNESS_ERROR and not verdict.passed
    assert "no OS isolation" in verdict.message
    assert verdict.isolation == sandbox.NONE


def test_old_verdicts_load_without_an_isolation_field() -> None:
    old = Verdict(task_id="t").model_dump()
    old.pop("isolation")
    assert Verdict.model_validate(old).isolation == ""


def test_eval_cli_passes_the_unsafe_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    from agents.cli.main import app

    seen = {}

    def fake(task: object, candidate: object, config: JudgeConfig) -> Verdict:
        seen["config"] = config
        return Verdict(task_id="softmax_fp32", passed=True)

    monkeypatch.setattr("benchmarks.harness.judge.evaluate", fake)
    good = str(TESTS / "hostile" / "good_softmax.py")
    base = ["eval", "--task", "softmax_fp32", "--candidate", good, "--json"]
    CliRunner().invoke(app, base)
    assert not seen["config"].allow_unisolated and not seen["config"].trusted
    CliRunner().invoke(app, [*base, "--unsafe-no-isolation"])
    assert seen["config"].allow_unisolated


def test_doctor_says_which_isolation_is_in_force() -> None:
    from agents.cli.doctor import collect

    assert collect()["isolation"].startswith(sandbox.level())
