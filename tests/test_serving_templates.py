"""The gather and rotary templates (knowledge_base/kernels/tpl_row_gather.py, tpl_rotary_half.py)
cover the serving tasks embedding and rope_neox_qk under hidden provenance: the offline policy
wraps them to the task's entry point, the real judge passes them, and a benchmark-mode offline
run ends with a correct kernel that came from the template, not from the task's own solution.

CPU, Triton interpreter; fp32 and fp16 variants only (the interpreter computes bf16 wrongly).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agents import api
from agents.core.seams import Seams
from agents.offline.policy import reference_kernels
from benchmarks import get_task
from benchmarks.harness.judge import JudgeConfig, evaluate

KERNELS = Path(__file__).resolve().parents[1] / "knowledge_base" / "kernels"
CPU = JudgeConfig(device="cpu", trials=1, timeout_s=240)
TEMPLATE_OF = {"embedding": "tpl_row_gather", "rope_neox_qk": "tpl_rotary_half"}
# a neighbour each task's real retrieval also returns (tests/test_kb_index.py)
NEIGHBOUR_OF = {"embedding": "tpl_kv_cache_scatter", "rope_neox_qk": "qk_rmsnorm"}


def _hit(stem: str) -> dict[str, Any]:
    path = KERNELS / f"{stem}.py"
    return {"id": f"kernel:{stem}", "path": str(path), "text": path.read_text()}


def _hits(name: str) -> list[dict[str, Any]]:
    """What a retrieval that forgot to hide the task could return: its own solution first."""
    return [_hit(name), _hit(TEMPLATE_OF[name]), _hit(NEIGHBOUR_OF[name])]


@pytest.mark.parametrize(
    "task_id", ["embedding_fp32", "embedding_fp16", "rope_neox_qk_fp32", "rope_neox_qk_fp16"]
)
def test_hidden_provenance_offers_the_template_and_the_judge_passes_it(
    task_id: str, tmp_path: Path
) -> None:
    task = get_task(task_id)
    refs = reference_kernels(task, _hits(task.name), benchmark=True)
    template = TEMPLATE_OF[task.name]
    assert f"kernel:{task.name}" not in {r["id"] for r in refs}
    ref = refs[0]
    assert (ref["id"], ref["kind"]) == (f"kernel:{template}", "template")
    assert ref["how"].startswith("wrapped ")
    path = tmp_path / f"{task_id}_{template}.py"
    path.write_text(ref["source"])
    verdict = evaluate(task, path, CPU)
    assert verdict.passed, f"{task_id}: {verdict.error_class}: {verdict.message}"


def test_normal_mode_still_puts_the_tasks_own_solution_first() -> None:
    task = get_task("embedding_fp32")
    refs = reference_kernels(task, _hits("embedding"), benchmark=False)
    assert [r["kind"] for r in refs][:2] == ["task_solution", "template"]


def test_a_benchmark_mode_offline_run_on_embedding_ends_with_the_templates_kernel(
    tmp_path: Path,
) -> None:
    def fake_kb() -> Any:
        rows = [SimpleNamespace(kind="kernel", title=h["id"], tier="promising", score=0.5,
                                snippet=h["id"], **h) for h in _hits("embedding")]  # fmt: skip
        return SimpleNamespace(search=lambda query="", **kw: rows)

    result = api.run(
        "embedding_fp32",
        llm="offline",
        device="cpu",
        runs_dir=tmp_path,
        settings={
            "kb": "auto",
            "benchmark": True,
            "offline.codegen": False,  # the template alone must carry the task
            "judge.trials": 1,
            "budget.iterations": 1,
        },
        run_id="embedding",
        quiet=True,
        seams=Seams(open_kb=fake_kb),
    )
    assert result.best_kernel is not None, "the run ended without a correct kernel"
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["provenance"]["kind"] == "template"
    assert summary["provenance"]["name"] == "tpl_row_gather"
    assert "def row_gather(" in result.best_kernel.read_text()
