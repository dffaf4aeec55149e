"""Every hostile candidate under tests/hostile/ against the static stage.

Files whose expected error class is a static one must be rejected with exactly that class; every
other file must pass the static stage, so that the dynamic judge gets to see (and catch) it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_manifest import HOSTILE_DIR, HostileCase, load_hostile, parse_header

from benchmarks.harness.static_check import check_task_candidate
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass, Stage

CASES = load_hostile()

# The cases the judge's issue asks for, by file name; each must exist with this expectation.
REQUIRED = {
    "torch_softmax_direct": ErrorClass.FORBIDDEN_API,
    "torch_functional_aliased": ErrorClass.FORBIDDEN_API,
    "tensor_method": ErrorClass.FORBIDDEN_API,
    "ops_aten": ErrorClass.FORBIDDEN_API,
    "fallback_operators": ErrorClass.FALLBACK,
    "writes_nothing": ErrorClass.NAN_INF_MISMATCH,
    "returns_input": ErrorClass.NUMERICAL_MISMATCH,
    "cached_output": ErrorClass.NUMERICAL_MISMATCH,
    "mutates_input": ErrorClass.INPUT_MUTATED,
    "unstable_softmax": ErrorClass.NAN_INF_MISMATCH,
    "tail_mask_bug": ErrorClass.NUMERICAL_MISMATCH,
    "infinite_loop": ErrorClass.TIMEOUT,
    "segfault": ErrorClass.CRASH,
    "ctypes_segfault": ErrorClass.FORBIDDEN_API,
    "exit_sys": ErrorClass.FORBIDDEN_API,
    "exit_os": ErrorClass.EARLY_EXIT,
    "side_stream": ErrorClass.NONE,
    "good_softmax": ErrorClass.NONE,
    # issue 13: the crossings of the static check, closed (their OS-layer twins run unchecked in
    # tests/test_sandbox_hostile.py)
    "crossing_subscript_module": ErrorClass.FORBIDDEN_API,
    "crossing_call_module": ErrorClass.FORBIDDEN_API,
    "crossing_call_private": ErrorClass.FORBIDDEN_API,
    "reexport_knobs_getenv": ErrorClass.FORBIDDEN_API,
    "reexport_from_import_build": ErrorClass.FORBIDDEN_API,
    "reexport_importlib_loader": ErrorClass.FORBIDDEN_API,
    "format_map_globals": ErrorClass.FORBIDDEN_API,
    "format_built_string": ErrorClass.FORBIDDEN_API,
    "format_unbound_str": ErrorClass.FORBIDDEN_API,
    "capture_scope_builtins": ErrorClass.FORBIDDEN_API,
    "os_env_key_format": ErrorClass.FORBIDDEN_API,
    "os_read_secrets_path": ErrorClass.FORBIDDEN_API,
    "os_write_tree_path": ErrorClass.FORBIDDEN_API,
}


def test_required_hostile_cases_exist() -> None:
    by_name = {case.name: case for case in CASES}
    for name, expect in REQUIRED.items():
        assert name in by_name, f"tests/hostile/{name}.py is missing"
        assert by_name[name].expect == expect, name


def test_headers_of_special_cases() -> None:
    by_name = {case.name: case for case in CASES}
    assert by_name["unstable_softmax"].stage_reached == Stage.CORRECT_STANDARD
    assert by_name["side_stream"].gpu and by_name["side_stream"].flags == ("side_stream",)
    assert not by_name["good_softmax"].gpu


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_case_meets_its_static_expectation(case: HostileCase) -> None:
    task = get_task(case.task)
    result = check_task_candidate(case.source(), task, filename=case.path.name)
    if case.is_static:
        assert result.error_class == case.expect, f"{case.name}: {case.why}\n{result.message}"
        assert not result.ok
        assert result.line is not None or case.expect == ErrorClass.MISSING_ENTRY_POINT
    else:
        # it must get past the static stage for the dynamic judge to catch it
        assert result.ok, f"{case.name} should pass the static check: {result.message}"
        assert result.launched, case.name


def test_manifest_rejects_a_malformed_header(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("# expect: not_a_class\n# task: softmax_fp32\n# why: x\nimport torch\n")
    with pytest.raises(ValueError, match="not_a_class"):
        parse_header(bad)
    missing = tmp_path / "missing.py"
    missing.write_text("# expect: none\n# task: softmax_fp32\nimport torch\n")
    with pytest.raises(ValueError, match="why"):
        parse_header(missing)
    stage = tmp_path / "stage.py"
    stage.write_text("# expect: none\n# task: t\n# why: w\n# stage_reached: compiled\nx = 1\n")
    with pytest.raises(ValueError, match="stage_reached"):
        parse_header(stage)


def test_manifest_reads_only_the_leading_comment_block(tmp_path: Path) -> None:
    f = tmp_path / "case.py"
    f.write_text(
        "# expect: crash\n# task: softmax_fp32\n# why: w\n# gpu: true\nx = 1\n# flags: late\n"
    )
    case = parse_header(f)
    assert case.expect == ErrorClass.CRASH and case.gpu and case.flags == ()


def test_manifest_covers_the_directory() -> None:
    files = sorted(p for p in HOSTILE_DIR.glob("*.py") if not p.name.startswith("_"))
    assert [c.path for c in CASES] == files
    assert len(CASES) >= len(REQUIRED)
