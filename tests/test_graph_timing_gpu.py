"""Decode shapes timed as served, inside a CUDA graph, on the device: an honest kernel gets both
figures and the graph's in its score, a kernel a graph cannot hold is timed call by call and still
passes, and candidates that behave differently while captured fail. Run there: pytest -m gpu."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from hostile_manifest import HOSTILE_DIR, parse_header

from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass
from knowledge_base import solution_path

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]
GPU = JudgeConfig(device="cuda", trials=2, timeout_s=300)


def test_decode_shapes_are_scored_inside_a_cuda_graph() -> None:
    verdict = evaluate(get_task("silu_fp32"), solution_path("silu"), GPU)
    assert verdict.passed, verdict.message
    timed = [s for s in verdict.shapes if not s.correctness_only]
    decode = [s for s in timed if s.phase == "decode"]
    assert decode and len(decode) < len(timed)
    for s in decode:
        assert s.timing == "graph", s.notes
        assert s.graph_us and s.call_us and s.eager_graph_us and s.compile_graph_us, s
        assert s.candidate_us == s.graph_us and s.eager_us == s.eager_graph_us
        # inside a graph the host's launch cost is gone: the per-call figure is the larger
        assert s.graph_us < s.call_us, (s.shape, s.graph_us, s.call_us)
        assert 0 < s.attainment <= 1.05, (s.shape, s.attainment)
    for s in timed:
        if s.phase != "decode":
            assert s.timing == "call" and s.graph_us is None


SYNCING_SILU = """
import torch
import triton
import triton.language as tl


@triton.jit
def _silu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (x / (1.0 + tl.exp(-x))).to(y_ptr.dtype.element_ty), mask=mask)


def silu(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _silu[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    torch.cuda.synchronize()
    return y
"""


def _past_the_lint(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks.harness.static_check import StaticResult

    monkeypatch.setattr(
        "benchmarks.harness.judge.check_source",
        lambda *a, **k: StaticResult(ok=True, error_class=ErrorClass.NONE, message=""),
    )


def test_a_kernel_a_graph_cannot_hold_is_timed_call_by_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "syncing_silu.py"
    path.write_text(SYNCING_SILU)
    _past_the_lint(monkeypatch)  # the lint refuses torch.cuda.synchronize; the timing must cope
    verdict = evaluate(get_task("silu_fp32"), path, GPU)
    assert verdict.passed, verdict.message
    decode = [s for s in verdict.shapes if s.phase == "decode" and not s.correctness_only]
    for s in decode:
        assert s.timing == "call" and s.candidate_us == s.call_us
        assert any("capture failed" in n for n in s.notes), s.notes


@pytest.mark.parametrize(
    "name",
    ["graph_stale_when_captured", "graph_skip_when_captured", "graph_partial_when_captured"],
)
def test_a_candidate_that_behaves_otherwise_when_captured_fails(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = parse_header(HOSTILE_DIR / f"{name}.py")
    _past_the_lint(monkeypatch)
    verdict = evaluate(get_task(case.task), case.path, GPU)
    assert verdict.error_class == case.unchecked, verdict.message
    assert not verdict.passed
