"""Knowledge-base templates (knowledge_base/kernels/tpl_*.py, kernel families written to be
adapted) reach the model's generator prompt when retrieval returns them: in full beside the best
kernel, with the tunables their KB_META declares, even when only the kernel search found them.

CPU, a fake knowledge base (the open_kb test seam) and a replayed model (`--llm replay:FILE`).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agents import api
from agents.core.model_policy import knowledge_rows
from agents.core.seams import Seams

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "knowledge_base" / "kernels"
FIXED = (ROOT / "tests" / "fixtures" / "agent" / "kernels" / "softmax_fixed.py").read_text()


def hit(stem: str, kind: str = "kernel") -> SimpleNamespace:
    path = KERNELS / f"{stem}.py" if kind == "kernel" else Path(f"knowledge_base/docs/{stem}.md")
    return SimpleNamespace(
        id=f"{kind}:{stem}",
        kind=kind,
        title=stem,
        path=str(path),
        tier="promising",
        score=0.5,
        snippet=f"{stem} in a few words",
        text=path.read_text() if kind == "kernel" else f"{stem}: a note on softmax",
    )


def test_a_template_the_kernel_search_found_is_in_the_generator_prompt_with_its_tunables(
    tmp_path: Path,
) -> None:
    def fake_kb() -> Any:
        def search(query: str = "", *, kinds: Any = ("kernel", "doc"), **kw: Any) -> list[Any]:
            if tuple(kinds) == ("kernel",):  # the kernel search: a template among its hits
                return [hit("layernorm"), hit("tpl_online_softmax"), hit("gelu_tanh")]
            return [hit("online-softmax", kind="doc"), hit("layernorm")]  # documents first

        return SimpleNamespace(search=search)

    script = tmp_path / "one.jsonl"
    script.write_text(json.dumps({"text": f"```python\n{FIXED}```"}) + "\n")
    result = api.run(
        "softmax_fp32",
        llm=f"replay:{script}",
        device="cpu",
        runs_dir=tmp_path,
        budget="iterations=1",
        settings={"kb": "auto", "benchmark": True, "judge.trials": 1, "agent.candidates": 1},
        run_id="template",
        quiet=True,
        seams=Seams(open_kb=fake_kb),
    )
    run = result.run_dir
    shown = (run / "attempts" / "1" / "prompt.md").read_text()
    template = (KERNELS / "tpl_online_softmax.py").read_text()
    assert "### tpl_online_softmax (template kernel, promising;" in shown
    assert template.strip() in shown  # in full, beside the best kernel (layernorm)
    assert (
        'Tunables it declares (`KB_META["tunables"]`): ROWS in [1, 2, 4, 8, 16, 32]; '
        "BLOCK_N in [128, 1024, 4096, 8192]; num_warps in [1, 2, 4, 8, 16]"
    ) in shown
    assert "### gelu_tanh" not in shown  # only templates join the knowledge hits
    came = json.loads((run / "attempts" / "1" / "attempt.json").read_text())["provenance"]
    assert came["retrieved"] == [
        "doc:online-softmax",
        "kernel:layernorm",
        "kernel:tpl_online_softmax",
    ]


def test_knowledge_rows_show_the_best_kernel_and_the_best_template_in_full() -> None:
    hits = [hit("layernorm"), hit("rmsnorm"), hit("tpl_online_softmax"), hit("tpl_row_reduce")]
    rows = knowledge_rows([vars(h) for h in hits])
    full = [r["title"] for r in rows if r["body"].startswith("```python")]
    assert full == ["layernorm", "tpl_online_softmax"]
    assert [r["kind"] for r in rows] == ["kernel", "kernel", "template kernel", "template kernel"]
    # a kernel shown as a snippet still shows what it declares
    rmsnorm = rows[1]
    assert rmsnorm["body"] == "rmsnorm in a few words"
    assert rmsnorm["tunables"].startswith("BLOCK_N in [")


def test_a_long_kernel_is_cut_at_a_line_with_a_note_so_the_prompt_stays_bounded() -> None:
    from agents.core.model_policy import FULL_KERNEL_CHARS

    long = vars(hit("layernorm"))
    long["text"] = "\n".join(f"x_{i} = {i}  # line {i}" for i in range(4000))
    rows = knowledge_rows([long, vars(hit("tpl_online_softmax"))])
    body = rows[0]["body"]
    assert len(body) <= FULL_KERNEL_CHARS + 200 and body.endswith("\n```")
    shown = body.split("\n")[1:-2]  # between the fence and the note
    assert all(line.startswith("x_") for line in shown)  # whole lines only
    assert f"{4000 - len(shown)} more lines not shown" in body.split("\n")[-2]
    # a kernel that fits is shown whole
    assert rows[1]["body"] == f"```python\n{vars(hit('tpl_online_softmax'))['text'].strip()}\n```"


def test_every_kernel_the_knowledge_base_ships_fits_the_prompt_whole() -> None:
    from agents.core.model_policy import FULL_KERNEL_CHARS
    from knowledge_base import KERNELS_DIR

    longest = max(KERNELS_DIR.glob("*.py"), key=lambda p: len(p.read_text().strip()))
    assert len(longest.read_text().strip()) <= FULL_KERNEL_CHARS, longest.name
