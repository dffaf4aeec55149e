"""The public formats (KernelBench- and TritonBench-style files) through the judge on a CUDA GPU:
every fixture candidate gets the verdict its header names, the passing ones are timed, and their
FLOPs/bytes stay marked as estimates. Run on the device: pytest -m gpu."""

from pathlib import Path

import pytest
import torch
from hostile_manifest import load_hostile

from benchmarks.formats.common import COST_NOTE
from benchmarks.harness.judge import JudgeConfig, evaluate
from benchmarks.loading import get_task
from benchmarks.verdict import ErrorClass

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
GPU = JudgeConfig(device="cuda", trials=2, timeout_s=300)


@pytest.mark.parametrize("case", load_hostile(FIXTURES / "candidates"), ids=lambda c: c.name)
def test_imported_task_candidate_gets_its_verdict_on_the_gpu(case):
    verdict = evaluate(get_task(str(FIXTURES / case.task)), case.path, GPU)
    assert verdict.error_class == case.expect, verdict.message
    assert COST_NOTE in verdict.notes
    if case.expect == ErrorClass.NONE:
        assert verdict.perf_status.startswith("measured"), verdict.perf_status
        for s in verdict.shapes:
            if s.correctness_only:  # the derived ragged shape: checked, never timed
                continue
            assert s.candidate_us and s.eager_us and s.roofline_us, s.shape
            assert s.flops is not None and s.bytes
