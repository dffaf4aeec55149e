"""Where each kernel came from (agents/core/state.py `Provenance`): one record per attempt, the
best kernel's in summary.json and the run's last lines; a normal-mode run says up front when it
starts from the task's own solution, and the demo runs with hidden provenance.

CPU only, knowledge base off (or a fake one), one round each: the judge runs once per test.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rich.console import Console
from typer.testing import CliRunner

from agents import api
from agents.cli.main import app
from agents.core.seams import Seams
from agents.core.state import ORIGIN_KINDS, Attempt, Provenance, VerdictSummary, optimized_from
from agents.offline.policy import reference_kernels, reference_provenance
from benchmarks import get_task

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "knowledge_base" / "kernels"
SOLUTION = (KERNELS / "softmax.py").read_text()
ONE_ROUND = {"kb": "off", "judge.trials": 1, "budget.iterations": 1}


def attempt_json(run_dir: Path, i: int) -> dict[str, Any]:
    return json.loads((run_dir / "attempts" / str(i) / "attempt.json").read_text())


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=400, color_system=None), out


def kernel_hit(stem: str) -> SimpleNamespace:
    path = KERNELS / f"{stem}.py"
    return SimpleNamespace(
        id=f"kernel:{stem}",
        kind="kernel",
        title=stem,
        path=str(path),
        tier="promising",
        score=0.5,
        snippet=stem,
        text=path.read_text(),
    )


def test_each_kind_has_a_label_and_a_sentence() -> None:
    assert ORIGIN_KINDS == (
        "task_solution",
        "template",
        "retrieved",
        "generated",
        "model",
        "optimized",
    )
    labels = {
        "task_solution": "task_solution",
        "template": "template:tpl_online_softmax",
        "retrieved": "retrieved:kernel:layernorm",
        "generated": "generated:row",
        "model": "model:openai:gpt-4o",
    }
    names = {"template": "tpl_online_softmax", "retrieved": "kernel:layernorm"}
    names |= {"generated": "row", "model": "openai:gpt-4o", "task_solution": "kernel:softmax"}
    for kind, label in labels.items():
        record = Provenance(kind=kind, name=names[kind])
        assert record.label == label and record.sentence()
        assert Provenance.model_validate(record.model_dump(mode="json")) == record
    model = Provenance(kind="model", name="openai:gpt-4o", parent_id=3, retrieved=["doc:x"])
    assert model.sentence() == (
        "written by the model openai:gpt-4o, repairing attempt 3; its prompt showed doc:x"
    )


def test_an_optimized_kernel_names_its_parent_and_where_its_lineage_began() -> None:
    root = Provenance(kind="generated", name="row")
    first = Attempt(
        id=1,
        node="generator",
        mode="fresh",
        iteration=1,
        key="a",
        code_path="attempts/1/code.py",
        code_sha256="0",
        verdict=VerdictSummary(passed=True),
        provenance=root,
    )
    second = first.model_copy(
        update={"id": 2, "provenance": optimized_from(first, "the search", "B: 1 -> 2")}
    )
    third = optimized_from(second, "the search", "B: 2 -> 4")
    assert third.label == "optimized-from:2" and third.base == root  # the root, not attempt 2
    assert third.sentence() == (
        "attempt 2 changed by the search (B: 2 -> 4); that lineage began as written by rules "
        "from the task's PyTorch reference (agents/offline/codegen: row)"
    )


def test_reference_kernels_say_whether_they_are_the_tasks_own_a_template_or_a_neighbour() -> None:
    task = get_task("softmax_fp32")
    hits = [{"id": h.id, "path": h.path, "text": h.text} for h in map(kernel_hit, NEIGHBOURS)]
    normal = reference_kernels(task, hits, benchmark=False)
    assert [(r["id"], r["kind"]) for r in normal] == [
        ("kernel:softmax", "task_solution"),
        ("kernel:tpl_online_softmax", "template"),
        ("kernel:gelu_tanh", "retrieved"),
    ]
    assert [reference_provenance(r).label for r in normal] == [
        "task_solution",
        "template:tpl_online_softmax",
        "retrieved:kernel:gelu_tanh",
    ]
    hidden = reference_kernels(task, hits, benchmark=True)
    assert "task_solution" not in {r["kind"] for r in hidden}


NEIGHBOURS = ("tpl_online_softmax", "gelu_tanh")


def test_hidden_provenance_gives_the_prefill_task_the_flash_attention_template() -> None:
    task = get_task("attn_causal_prefill_fp32")
    # the task's own solution among the hits too: hidden provenance must drop it, the template stays
    stems = ("attn_causal_prefill", "tpl_flash_attention", "tpl_paged_attention_decode")
    hits = [{"id": h.id, "path": h.path, "text": h.text} for h in map(kernel_hit, stems)]
    hidden = reference_kernels(task, hits, benchmark=True)
    assert [(r["id"], r["kind"], r["how"]) for r in hidden] == [
        ("kernel:tpl_flash_attention", "template", "wrapped flash_attention()")
    ]  # the paged decode template takes 5 required arguments: no wrapper for (q, k, v)
    assert (
        "def attn_causal_prefill(q, k, v, BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=2):"
        in hidden[0]["source"]
    )  # the template's tunables stay searchable through the wrapper
    assert set(hidden[0]["tunables"]) == {"BLOCK_M", "BLOCK_N", "num_warps", "num_stages"}
    assert reference_provenance(hidden[0]).label == "template:tpl_flash_attention"


def test_a_normal_mode_run_says_up_front_that_it_starts_from_the_tasks_own_solution(
    tmp_path: Path,
) -> None:
    screen, out = console()
    result = api.run(
        "softmax_fp32",
        llm="offline",
        device="cpu",
        runs_dir=tmp_path,
        settings={**ONE_ROUND, "offline.codegen": False},
        run_id="normal",
        console=screen,
    )
    text = out.getvalue()
    note = "normal mode: the first candidate is task softmax_fp32's own reference solution"
    assert note in text and text.index(note) < text.index("attempt 1 (generator/fresh")
    assert "attempt 1 (generator/fresh, task_solution)" in text
    assert "where it came from: the task's own reference solution" in text
    assert result.best_kernel is not None and result.best_kernel.read_text() == SOLUTION
    record = attempt_json(result.run_dir, 1)["provenance"]
    assert record["kind"] == "task_solution" and record["path"].endswith("kernels/softmax.py")
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["provenance"] == record and summary["came_from"].startswith(
        "the task's own reference solution"
    )
    # the report's rows say it too
    from benchmarks import collect_rows
    from benchmarks.results.analysis import analyze
    from benchmarks.results.report_tables import rows_table

    rows, _, _ = collect_rows([result.run_dir])
    assert [r.came_from for r in rows][:1] == ["task_solution"]
    table = rows_table(analyze(rows))
    column = table.head.index("came from")
    assert table.rows[0][column] == "task_solution"


def test_a_model_written_kernel_says_so_and_names_what_its_prompt_showed(tmp_path: Path) -> None:
    script = tmp_path / "one.jsonl"
    script.write_text(json.dumps({"text": f"```python\n{SOLUTION}\n```"}) + "\n")

    def fake_kb() -> Any:
        return SimpleNamespace(search=lambda query="", **kw: [kernel_hit("tpl_online_softmax")])

    result = api.run(
        "softmax_fp32",
        llm=f"replay:{script}",
        device="cpu",
        runs_dir=tmp_path,
        settings={**ONE_ROUND, "kb": "auto", "benchmark": True, "agent.candidates": 1},
        run_id="model",
        quiet=True,
        seams=Seams(open_kb=fake_kb),
    )
    record = Provenance.model_validate(attempt_json(result.run_dir, 1)["provenance"])
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert record.kind == "model" and record.name == manifest["llm"]
    assert record.retrieved == ["kernel:tpl_online_softmax"] and record.parent_id is None
    assert record.sentence().startswith(f"written by the model {manifest['llm']}")


def test_the_demo_hides_the_tasks_own_solution_and_says_where_its_kernel_came_from(
    tmp_path: Path,
) -> None:
    env = {
        "KERNFORGE_KB": "off",  # no knowledge-base set-up: the demo's run without it
        "KERNFORGE_RUNS_DIR": str(tmp_path),
        "KERNFORGE_JUDGE_TRIALS": "1",
        "OPENAI_API_KEY": "",
        "ANTHROPIC_API_KEY": "",
        "COLUMNS": "400",
    }
    out = CliRunner().invoke(app, ["demo"], env=env)
    assert out.exit_code == 0, out.output
    assert "--benchmark" in out.output and "the first candidate is task" not in out.output
    (run,) = [p for p in tmp_path.iterdir() if (p / "manifest.json").is_file()]
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["config"]["benchmark"] is True
    best = (run / "best" / "kernel.py").read_text()
    assert best != SOLUTION
    summary = json.loads((run / "summary.json").read_text())
    assert summary["provenance"]["kind"] == "generated"
    assert f"where it came from: {summary['came_from']}" in out.output.replace("\n", " ")
